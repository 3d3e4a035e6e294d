OPEN = 5 * 60 + 30
CLOSE = 22 * 60


def peak_hour(checkins):
    seen = set()
    counts = {}
    for member, stamp in checkins:
        hours, minutes = stamp.split(":")
        time = int(hours) * 60 + int(minutes)
        if time < OPEN or time >= CLOSE:
            continue
        hour = time // 60
        if (member, hour) in seen:
            continue
        seen.add((member, hour))
        counts[hour] = counts.get(hour, 0) + 1
    if not counts:
        return None
    top = max(counts.values())
    for hour in sorted(counts):
        if counts[hour] == top:
            return hour
