import pandas as pd

df = pd.read_csv("data.csv")
print("rows read:", len(df))

# Exact duplicate rows are double-submitted forms: keep one copy.
df = df.drop_duplicates()
print("rows after removing duplicates:", len(df))

# Completed tickets opened in March 2024, both ends inclusive.
opened = pd.to_datetime(df["opened"])
in_march = (opened >= "2024-03-01") & (opened <= "2024-03-31")
done = df[in_march & (df["status"] == "done")]

# Tickets without a recorded parts cost are left out (not counted as 0).
done = done.dropna(subset=["parts_cost_eur"])
print("tickets used:", len(done))

by_shop = done.groupby("shop")["parts_cost_eur"].mean()
print(by_shop.round(2))
answer = float(by_shop.max())
print("answer:", answer)
