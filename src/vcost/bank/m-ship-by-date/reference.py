from datetime import date, timedelta

CUTOFF = "14:00"


def _is_business_day(day, holidays):
    return day.weekday() < 5 and day.isoformat() not in holidays


def _next_business_day(day, holidays):
    day += timedelta(days=1)
    while not _is_business_day(day, holidays):
        day += timedelta(days=1)
    return day


def ship_date(order_time, handling_days, holidays):
    if handling_days < 0:
        raise ValueError("handling_days must not be negative")
    closed = set(holidays)
    day_text, clock = order_time.split()
    day = date.fromisoformat(day_text)
    if not _is_business_day(day, closed) or clock >= CUTOFF:
        day = _next_business_day(day, closed)
    for _ in range(handling_days):
        day = _next_business_day(day, closed)
    return day.isoformat()
