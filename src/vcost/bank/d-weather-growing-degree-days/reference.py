import pandas as pd

df = pd.read_csv("data.csv")
print("rows read:", len(df))

# Exact duplicate rows are days the logger sent twice: keep one copy.
df = df.drop_duplicates()
print("rows after removing duplicates:", len(df))

# Station Hillcrest, 1 to 31 May 2024 inclusive.
date = pd.to_datetime(df["date"], format="%Y-%m-%d")
may = df[(df["station"] == "Hillcrest") & (date >= "2024-05-01") & (date <= "2024-05-31")]

# A day missing its maximum or its minimum contributes nothing.
may = may.dropna(subset=["tmax_tenths_c", "tmin_tenths_c"])
print("Hillcrest May days used:", len(may))

# Tenths of a degree -> degrees Celsius, then the modified (30/10) method.
tmax = (may["tmax_tenths_c"] / 10).clip(upper=30)
tmin = (may["tmin_tenths_c"] / 10).clip(lower=10)
daily = ((tmax + tmin) / 2 - 10).clip(lower=0)
print(daily.round(2).tolist())

answer = float(daily.sum())
print("answer:", answer)
