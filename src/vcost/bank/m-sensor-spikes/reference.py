def _median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2 == 1:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def find_spikes(readings, window, threshold):
    history = []
    spikes = []
    for index, value in enumerate(readings):
        if value is None:
            continue
        if len(history) >= window:
            baseline = _median(history[-window:])
            if abs(value - baseline) > threshold:
                spikes.append(index)
                continue
        history.append(value)
    return spikes
