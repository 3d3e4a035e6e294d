def clinic_waits(patients, doctors):
    if doctors < 1:
        raise ValueError("at least one doctor is needed")
    free_at = [0] * doctors  # minute at which each doctor is next free
    waits = [None] * len(patients)
    waiting = list(range(len(patients)))
    while waiting:
        doctor = min(range(doctors), key=lambda d: free_at[d])
        first_arrival = min(patients[i][0] for i in waiting)
        now = max(free_at[doctor], first_arrival)
        ready = [i for i in waiting if patients[i][0] <= now]
        # urgent first, then earliest arrival, then list order
        chosen = min(ready, key=lambda i: (not patients[i][2], patients[i][0], i))
        waiting.remove(chosen)
        waits[chosen] = now - patients[chosen][0]
        free_at[doctor] = now + patients[chosen][1]
    return waits
