import pandas as pd

df = pd.read_csv("data.csv")
print("rows read:", len(df))

# Exact duplicate rows are calls the phone system logged twice: keep one copy.
df = df.drop_duplicates()
print("rows after removing duplicates:", len(df))

# Answered billing calls received from 18:00:00 up to, not including, 22:00:00.
received = pd.to_datetime(df["received_at"], format="%Y-%m-%d %H:%M:%S")
evening = (received.dt.hour >= 18) & (received.dt.hour < 22)
calls = df[evening & (df["queue"] == "billing") & (df["outcome"] == "answered")]
print("evening billing calls answered:", len(calls))

# A call with no wrap-up time is left out entirely (not counted as 0 s of wrap-up).
calls = calls.dropna(subset=["talk_s", "wrap_s"])
print("calls used:", len(calls))

handling_min = (calls["talk_s"] + calls["wrap_s"]) / 60
by_agent = handling_min.groupby(calls["agent"]).mean()
print(by_agent.round(2))

answer = float(by_agent.max())
print("answer:", answer)
