PEAK_START = 7 * 60
PEAK_END = 9 * 60 + 30
PEAK_FARE = 350
OFF_PEAK_FARE = 250
DAILY_CAP = 800


def fares_total(rides):
    per_day = {}
    for ride in rides:
        if not ride:
            continue
        date, clock = ride.split(" ")
        hours, minutes = clock.split(":")
        time = int(hours) * 60 + int(minutes)
        if PEAK_START <= time < PEAK_END:
            fare = PEAK_FARE
        else:
            fare = OFF_PEAK_FARE
        per_day[date] = per_day.get(date, 0) + fare
    total = 0
    for spent in per_day.values():
        total += min(spent, DAILY_CAP)
    return total
