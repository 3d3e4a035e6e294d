def assign_rooms(rooms, requests, buffer):
    booked = [[] for _ in range(rooms)]
    result = []
    for start, end in requests:
        if end <= start:
            raise ValueError("a booking must end after it starts")
        best = None  # (gap, room) of the tightest room with an earlier booking
        fresh = None  # first free room with no earlier booking
        for room in range(rooms):
            bookings = booked[room]
            if not all(end + buffer <= s or e + buffer <= start for s, e in bookings):
                continue
            gaps = [start - (e + buffer) for s, e in bookings if e + buffer <= start]
            if gaps:
                if best is None or min(gaps) < best[0]:
                    best = (min(gaps), room)
            elif fresh is None:
                fresh = room
        chosen = best[1] if best is not None else fresh
        if chosen is None:
            result.append(None)
        else:
            booked[chosen].append((start, end))
            result.append(chosen + 1)
    return result
