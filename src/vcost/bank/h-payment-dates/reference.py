import calendar
from datetime import date, timedelta


def payment_dates(start, day, count, holidays):
    if count < 0 or not 1 <= day <= 31:
        raise ValueError("count must be >= 0 and day in 1..31")
    first = date.fromisoformat(start)
    closed = set(holidays)

    def is_business(d):
        return d.weekday() < 5 and d.isoformat() not in closed

    year, month = first.year, first.month
    result = []
    while len(result) < count:
        nominal = date(year, month, min(day, calendar.monthrange(year, month)[1]))
        if nominal >= first:
            paid = nominal
            while not is_business(paid):
                paid += timedelta(days=1)
            if paid.month != nominal.month:
                paid = nominal
                while not is_business(paid):
                    paid -= timedelta(days=1)
            result.append(paid.isoformat())
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return result
