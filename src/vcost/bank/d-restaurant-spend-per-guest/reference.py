import pandas as pd

df = pd.read_csv("data.csv")
print("rows read:", len(df))

# Exact duplicate rows are orders the till synced twice: keep one copy.
df = df.drop_duplicates()
print("rows after removing duplicates:", len(df))

# Paid dine-in orders only (voided orders were never charged).
dine = df[(df["channel"] == "dine-in") & (df["status"] == "paid")]
print("paid dine-in orders:", len(dine))

# Orders with no recorded covers are left out entirely (their subtotal too).
dine = dine.dropna(subset=["covers"])
print("orders used:", len(dine))

# Spend per guest = total subtotal / total covers, converted from cents to euros.
total_eur = dine["subtotal_cents"].sum() / 100
guests = dine["covers"].sum()
print("total EUR:", total_eur, "guests:", guests)

answer = float(total_eur / guests)
print("answer:", answer)
