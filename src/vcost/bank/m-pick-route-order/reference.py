def pick_order(lines):
    totals = {}
    places = {}
    for line in lines:
        sku = line["sku"]
        totals[sku] = totals.get(sku, 0) + line["qty"]
        places[sku] = (line["aisle"], line["shelf"])
    picks = []
    for sku, qty in totals.items():
        if qty <= 0:
            continue
        aisle, shelf = places[sku]
        if aisle % 2 == 1:
            walk = shelf
        else:
            walk = -shelf
        picks.append((aisle, walk, sku, qty))
    picks.sort()
    return [[sku, qty] for _, _, sku, qty in picks]
