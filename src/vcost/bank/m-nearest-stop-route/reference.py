def _distance(a, b):
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def delivery_route(stops):
    position = (0, 0)
    order = []
    total = 0
    urgent = [s for s in stops if s[3]]
    normal = [s for s in stops if not s[3]]
    for group in (urgent, normal):
        remaining = list(group)
        while remaining:
            best = None
            for stop in remaining:
                key = (_distance(position, (stop[1], stop[2])), stop[0])
                if best is None or key < best[0]:
                    best = (key, stop)
            remaining.remove(best[1])
            total += best[0][0]
            position = (best[1][1], best[1][2])
            order.append(best[1][0])
    total += _distance(position, (0, 0))
    return {"order": order, "distance": total}
