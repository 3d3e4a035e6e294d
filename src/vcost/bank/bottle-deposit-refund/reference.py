VALID_MATERIALS = {"glass", "plastic", "can"}
MAX_ML = 3000
LARGE_ML = 1000


def deposit_refund(containers, max_items):
    accepted = 0
    rejected = 0
    cents = 0
    for container in containers:
        ml = container["ml"]
        valid = container["material"] in VALID_MATERIALS and 0 < ml <= MAX_ML
        if not valid or accepted >= max_items:
            rejected += 1
            continue
        accepted += 1
        if ml >= LARGE_ML:
            cents += 25
        else:
            cents += 10
    return {"accepted": accepted, "rejected": rejected, "cents": cents}
