FIXED = 800
LOW_USE_FIXED = 400
LOW_USE_LIMIT = 50


def electricity_bill(daily_kwh):
    if not daily_kwh:
        return 0
    total = 0
    for kwh in daily_kwh:
        if kwh > 0:
            total += kwh
    if total < LOW_USE_LIMIT:
        fixed = LOW_USE_FIXED
    else:
        fixed = FIXED
    if total <= 100:
        energy = total * 12
    elif total <= 300:
        energy = 100 * 12 + (total - 100) * 18
    else:
        energy = 100 * 12 + 200 * 18 + (total - 300) * 25
    return fixed + energy
