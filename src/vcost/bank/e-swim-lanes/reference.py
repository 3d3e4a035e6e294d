LANES = [(95, "fast"), (120, "medium"), (150, "steady")]
SLOWEST = "easy"
MAX_SECONDS = 600


def swim_lanes(trials):
    best = {}
    for name, seconds in trials:
        if seconds <= 0 or seconds > MAX_SECONDS:
            continue
        if name not in best or seconds < best[name]:
            best[name] = seconds
    lanes = {}
    for name, seconds in best.items():
        lane = SLOWEST
        for limit, label in LANES:
            if seconds <= limit:
                lane = label
                break
        lanes.setdefault(lane, []).append(name)
    for names in lanes.values():
        names.sort()
    return lanes
