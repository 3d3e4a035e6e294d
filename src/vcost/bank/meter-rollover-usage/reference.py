WRAP = 100000


def meter_usage(readings, max_step):
    for reading in readings:
        if reading < 0 or reading >= WRAP:
            raise ValueError(f"reading out of range: {reading}")
    usage = 0
    replacements = 0
    peak = 0
    for i in range(1, len(readings)):
        previous = readings[i - 1]
        current = readings[i]
        step = (current - previous) % WRAP
        if step > max_step:
            replacements += 1
            step = current
        usage += step
        if step > peak:
            peak = step
    return {"usage": usage, "replacements": replacements, "peak": peak}
