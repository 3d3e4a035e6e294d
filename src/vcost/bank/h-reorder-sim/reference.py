def simulate_stock(start, demand, reorder_point, target, lead):
    if lead < 1:
        raise ValueError("lead time must be at least one day")
    stock = start
    lost = stockout_days = orders = 0
    due_day = due_qty = None  # the outstanding order, if any
    for day, wanted in enumerate(demand):
        if wanted < 0:
            raise ValueError("negative demand")
        if due_day == day:
            stock += due_qty
            due_day = due_qty = None
        sold = min(stock, wanted)
        stock -= sold
        if sold < wanted:
            lost += wanted - sold
            stockout_days += 1
        if due_day is None and stock <= reorder_point:
            due_day, due_qty = day + lead, target - stock
            orders += 1
    return {"lost": lost, "stockout_days": stockout_days, "orders": orders, "end_stock": stock}
