DAY = 1440
GRACE = 20


def parking_charges(visits, rate, cap):
    per_day = {}
    for entry, exit_ in visits:
        if exit_ < entry:
            raise ValueError("exit before entry")
        if exit_ - entry <= GRACE:
            continue
        t = entry
        while t < exit_:
            day = t // DAY
            piece_end = min(exit_, (day + 1) * DAY)
            hours = (piece_end - t + 59) // 60
            per_day[day] = per_day.get(day, 0) + hours * rate
            t = piece_end
    total = 0
    for day in per_day:
        total += min(per_day[day], cap)
    return total
