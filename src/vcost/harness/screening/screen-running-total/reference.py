def longest_rise(values: list[int]) -> int:
    best = 0
    run = 0
    for i, v in enumerate(values):
        run = run + 1 if i > 0 and v > values[i - 1] else 1
        best = max(best, run)
    return best
