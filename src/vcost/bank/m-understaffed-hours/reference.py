def understaffed_periods(shifts, required):
    staff = [0] * 24
    for start, end in shifts:
        if start <= end:
            hours = list(range(start, end))
        else:
            hours = list(range(start, 24)) + list(range(0, end))
        for hour in hours:
            staff[hour] += 1
    periods = []
    run_start = None
    for hour in range(24):
        if staff[hour] < required:
            if run_start is None:
                run_start = hour
        elif run_start is not None:
            periods.append([run_start, hour])
            run_start = None
    if run_start is not None:
        periods.append([run_start, 24])
    return periods
