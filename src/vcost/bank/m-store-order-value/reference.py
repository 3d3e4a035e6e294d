import pandas as pd

orders = pd.read_csv("data.csv", parse_dates=["order_date"])

# An order listed twice (same order_id, identical row) counts once.
orders = orders.drop_duplicates(subset="order_id", keep="first")

# Orders without a unit price have no net value: leave them out entirely.
orders = orders.dropna(subset=["unit_price"])

# Q1 2024, both ends included, and only orders that were not returned.
in_q1 = (orders["order_date"] >= "2024-01-01") & (orders["order_date"] <= "2024-03-31")
kept = orders[in_q1 & (orders["returned"] == "no")].copy()

# Net value in euros; discount_pct is a percentage.
kept["net"] = kept["qty"] * kept["unit_price"] * (1 - kept["discount_pct"] / 100)

per_store = kept.groupby("store")["net"].mean()
print(per_store.round(2))

answer = round(per_store.max(), 2)
print("answer:", answer)
