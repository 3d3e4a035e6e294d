VOUCHER_FROM = 10000
VOUCHER = 500


def receipt_total(items, offers):
    for size in offers.values():
        if size < 2:
            raise ValueError("an offer needs at least 2 items")
    by_category = {}
    for name, category, price in items:
        if price < 0:
            raise ValueError("prices must not be negative")
        by_category.setdefault(category, []).append(price)
    total = 0
    for category, prices in by_category.items():
        total += sum(prices)
        size = offers.get(category)
        if size is None:
            continue
        prices.sort(reverse=True)
        for end in range(size, len(prices) + 1, size):
            total -= prices[end - 1]
    if total >= VOUCHER_FROM:
        total -= VOUCHER
    return total
