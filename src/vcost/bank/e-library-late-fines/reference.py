RATES = {"book": 25, "dvd": 100}
GRACE_DAYS = {"book": 3, "dvd": 1}
LOAN_CAP = 1500
MEMBER_CAP = 4000


def library_fines(loans):
    totals = {}
    for loan in loans:
        kind = loan["kind"]
        days = loan["days_late"]
        if days <= GRACE_DAYS[kind]:
            continue
        fine = days * RATES[kind]
        if fine > LOAN_CAP:
            fine = LOAN_CAP
        member = loan["member"]
        totals[member] = totals.get(member, 0) + fine
    result = {}
    for member, total in totals.items():
        result[member] = min(total, MEMBER_CAP)
    return result
