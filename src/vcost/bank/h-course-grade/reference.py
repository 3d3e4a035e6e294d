from fractions import Fraction

WEIGHTS = {"homework": 30, "quiz": 20, "exam": 50}
LETTERS = [(90, "A"), (80, "B"), (70, "C"), (60, "D")]


def final_grades(records):
    scores = {}
    for name, category, score in records:
        if category not in WEIGHTS:
            raise ValueError("unknown category " + repr(category))
        value = 0 if score is None else score
        scores.setdefault(name, {}).setdefault(category, []).append(value)
    result = {}
    for name, by_category in scores.items():
        total = Fraction(0)
        weight = 0
        for category, values in by_category.items():
            if category == "quiz" and len(values) >= 3:
                values = sorted(values)[1:]
            total += WEIGHTS[category] * Fraction(sum(values), len(values))
            weight += WEIGHTS[category]
        average = total / weight
        final = int(average + Fraction(1, 2))  # round half up (average >= 0)
        letter = next((mark for cut, mark in LETTERS if final >= cut), "F")
        result[name] = [final, letter]
    return result
