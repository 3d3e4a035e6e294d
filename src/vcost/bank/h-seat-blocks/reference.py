def free_runs(row):
    """(length, first_seat) of every maximal run of free seats in a row."""
    runs, start = [], None
    for i, seat in enumerate(row + "#"):
        if seat == "." and start is None:
            start = i
        elif seat != "." and start is not None:
            runs.append((i - start, start))
            start = None
    return runs


def seat_groups(rows, groups):
    rows = list(rows)
    placed = []
    for size in groups:
        if size <= 0:
            raise ValueError("group size must be positive")
        best = None  # (run length, row index, first seat)
        for r, row in enumerate(rows):
            for length, first in free_runs(row):
                if length >= size and (best is None or (length, r, first) < best):
                    best = (length, r, first)
        if best is None:
            placed.append(None)
            continue
        _, r, first = best
        rows[r] = rows[r][:first] + "#" * size + rows[r][first + size:]
        placed.append([r, first])
    return placed
