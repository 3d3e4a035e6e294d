GROUP_SIZE = 6
GROUP_TIP = 18


def split_bill(subtotal_cents, tip_percent, people):
    if people <= 0:
        raise ValueError("need at least one person")
    if subtotal_cents < 0 or tip_percent < 0:
        raise ValueError("amounts cannot be negative")
    if people >= GROUP_SIZE and tip_percent < GROUP_TIP:
        tip_percent = GROUP_TIP
    tip = (subtotal_cents * tip_percent + 50) // 100
    total = subtotal_cents + tip
    share, left_over = divmod(total, people)
    shares = []
    for i in range(people):
        if i < left_over:
            shares.append(share + 1)
        else:
            shares.append(share)
    return shares
