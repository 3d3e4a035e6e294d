def fifo_cost(events):
    lots = []  # [units, unit_cost], front of the queue first
    costs = []
    short = taken = returned = 0
    last_cost = None
    for event in events:
        kind, qty = event[0], event[1]
        if qty < 0:
            raise ValueError("negative quantity")
        if kind == "buy":
            if qty > 0:
                lots.append([qty, event[2]])
        elif kind == "sell":
            cost = 0
            while qty > 0 and lots:
                take = min(qty, lots[0][0])
                cost += take * lots[0][1]
                last_cost = lots[0][1]
                lots[0][0] -= take
                qty -= take
                taken += take
                if lots[0][0] == 0:
                    lots.pop(0)
            short += qty
            costs.append(cost)
        elif kind == "return":
            if returned + qty > taken:
                raise ValueError("more units returned than sold")
            returned += qty
            if qty > 0:
                lots.insert(0, [qty, last_cost])
        else:
            raise ValueError("unknown event " + repr(kind))
    stock = sum(units for units, _ in lots)
    value = sum(units * cost for units, cost in lots)
    return {"costs": costs, "short": short, "stock": stock, "value": value}
