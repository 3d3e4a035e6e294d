TO_BASE = {"g": ("g", 1), "kg": ("g", 1000), "mm": ("mm", 1), "m": ("mm", 1000), "pcs": ("pcs", 1)}
BIG_UNIT = {"g": "kg", "mm": "m"}


def combine_order(lines):
    totals = {}
    units = {}
    for line in lines:
        if not line.strip():
            continue
        qty_text, unit, name = line.split(maxsplit=2)
        qty = float(qty_text)
        if qty <= 0:
            raise ValueError("quantity must be positive")
        if unit not in TO_BASE:
            raise ValueError("unknown unit " + unit)
        base, factor = TO_BASE[unit]
        name = name.strip().lower()
        if name in units and units[name] != base:
            raise ValueError("incompatible units for " + name)
        units[name] = base
        totals[name] = totals.get(name, 0.0) + qty * factor
    result = {}
    for name, amount in totals.items():
        unit = units[name]
        if unit in BIG_UNIT and amount >= 1000:
            result[name] = [amount / 1000, BIG_UNIT[unit]]
        else:
            result[name] = [amount, unit]
    return result
