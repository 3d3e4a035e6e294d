def scale_recipe(ingredients, base_servings, servings):
    if base_servings <= 0 or servings <= 0:
        raise ValueError("servings must be positive")
    totals = {}
    for name, grams in ingredients:
        if grams < 0:
            raise ValueError("negative amount for " + name)
        totals[name] = totals.get(name, 0) + grams
    scaled = {}
    for name, grams in totals.items():
        if grams == 0:
            continue
        amount = grams * servings // base_servings
        if amount * base_servings < grams * servings:
            amount += 1
        scaled[name] = amount
    return scaled
