def battery_day(solar, load, capacity, max_rate, reserve, start_level):
    if len(solar) != len(load):
        raise ValueError("solar and load must cover the same hours")
    for value in solar + load:
        if value < 0:
            raise ValueError("energy values must not be negative")
    level = start_level
    imported = 0
    exported = 0
    for produced, used in zip(solar, load):
        surplus = produced - used
        if surplus > 0:
            charge = min(surplus, max_rate, capacity - level)
            level += charge
            exported += surplus - charge
        elif surplus < 0:
            need = -surplus
            discharge = min(need, max_rate, max(level - reserve, 0))
            level -= discharge
            imported += need - discharge
    return {"import": imported, "export": exported, "final_level": level}
