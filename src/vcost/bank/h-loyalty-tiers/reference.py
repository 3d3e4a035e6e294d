TIERS = ["bronze", "silver", "gold"]
THRESHOLDS = [0, 500, 1500]  # spend needed to hold (or reach) each tier


def tier_history(monthly_spend):
    level = 0
    up = down = 0
    history = []
    for spend in monthly_spend:
        if level < 2:
            if spend is not None and spend >= THRESHOLDS[level + 1]:
                up += 1
            elif spend is not None:
                up = 0
        if level > 0 and (spend is None or spend < THRESHOLDS[level]):
            down += 1
        else:
            down = 0
        if up == 2:
            level, up, down = level + 1, 0, 0
        elif down == 3:
            level, up, down = level - 1, 0, 0
        history.append(TIERS[level])
    return history
