def _money(cents):
    dollars, rest = divmod(abs(cents), 100)
    digits = str(dollars)
    groups = []
    while len(digits) > 3:
        groups.insert(0, digits[-3:])
        digits = digits[:-3]
    groups.insert(0, digits)
    text = ",".join(groups) + "." + str(rest).zfill(2)
    if cents < 0:
        text = "(" + text + ")"
    return text


def format_ledger(amounts):
    if not amounts:
        return []
    lines = [_money(cents) for cents in amounts]
    lines.append(_money(sum(amounts)))
    width = max(len(line) for line in lines)
    return [line.rjust(width) for line in lines]
