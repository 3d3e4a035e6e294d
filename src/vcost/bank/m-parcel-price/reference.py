import math


def parcel_price(length_cm, width_cm, height_cm, weight_kg):
    sides = sorted([length_cm, width_cm, height_cm])
    if sides[0] <= 0 or weight_kg <= 0:
        raise ValueError("dimensions and weight must be positive")
    volumetric = length_cm * width_cm * height_cm / 5000
    billable = math.ceil(max(weight_kg, volumetric) * 2) / 2
    if billable > 30:
        return None
    price = 4.50
    if billable > 1:
        price += (billable - 1) / 0.5 * 0.80
    longest = sides[2]
    girth = 2 * (sides[0] + sides[1])
    if longest > 120 or longest + girth > 300:
        price += 15.00
    return round(price, 2)
