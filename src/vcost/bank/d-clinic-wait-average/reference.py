import pandas as pd

visits = pd.read_csv("data.csv")

# The same visit entered twice appears as an exact duplicate row: keep one copy.
visits = visits.drop_duplicates()

# Pediatrics visits at the North clinic.
north_peds = visits[(visits["clinic"] == "North") & (visits["department"] == "Pediatrics")]

# Visits with no recorded waiting time are left out (not counted as 0).
waits = north_peds["wait_minutes"].dropna()
print("visits:", len(north_peds), "with a recorded wait:", len(waits))

answer = round(waits.mean(), 2)
print("answer:", answer)
