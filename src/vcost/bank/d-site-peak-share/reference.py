import pandas as pd

meters = pd.read_csv("data.csv", parse_dates=["date"])

# 1. A later row for the same site and date is a correction: keep the last one in the file.
meters = meters.drop_duplicates(subset=["site", "date"], keep="last")

# 2. Drop whole rows with a missing or negative kwh_total or kwh_peak.
meters = meters.dropna(subset=["kwh_total", "kwh_peak"])
meters = meters[(meters["kwh_total"] >= 0) & (meters["kwh_peak"] >= 0)]

# Weekdays (Monday=0 .. Friday=4) of February 2024, including 29 February.
in_february = (meters["date"] >= "2024-02-01") & (meters["date"] <= "2024-02-29")
weekday = meters["date"].dt.day_of_week < 5
selected = meters[in_february & weekday]

# Peak share per site as a ratio of sums, in percent.
sums = selected.groupby("site")[["kwh_peak", "kwh_total"]].sum()
share_pct = sums["kwh_peak"] / sums["kwh_total"] * 100
print(share_pct.round(3))

answer = round(share_pct.max() - share_pct.min(), 2)
print("answer:", answer)
