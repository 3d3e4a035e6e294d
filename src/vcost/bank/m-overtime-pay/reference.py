def weekly_pay(hours, rate):
    if len(hours) > 7:
        raise ValueError("a week has at most 7 days")
    for worked in hours:
        if worked < 0 or worked > 24:
            raise ValueError("hours in a day must be within 0..24")
    regular_used = 0.0
    pay = 0.0
    for day, worked in enumerate(hours):
        if day == 6:
            pay += worked * rate * 2
            continue
        regular = min(worked, 8)
        time_and_half = min(max(worked - 8, 0), 4)
        double = max(worked - 12, 0)
        at_base = min(regular, max(40 - regular_used, 0))
        regular_used += regular
        pay += at_base * rate
        pay += (regular - at_base + time_and_half) * rate * 1.5
        pay += double * rate * 2
    return round(pay, 2)
