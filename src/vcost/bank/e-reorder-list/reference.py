def reorder_list(records):
    stock = {}
    reorder_at = {}
    for record in records:
        if record["discontinued"]:
            continue
        sku = record["sku"]
        stock[sku] = stock.get(sku, 0) + record["stock"]
        reorder_at[sku] = record["reorder_at"]
    orders = []
    for sku in stock:
        point = reorder_at[sku]
        if stock[sku] <= point:
            orders.append([sku, 2 * point - stock[sku]])
    orders.sort(key=lambda order: (-order[1], order[0]))
    return orders
