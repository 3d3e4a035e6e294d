import pandas as pd

df = pd.read_csv("data.csv")
print("rows read:", len(df))

# Exact duplicate rows are trips the dock uploaded twice: keep one copy.
df = df.drop_duplicates()
print("rows after removing duplicates:", len(df))

# Electric-bike trips by casual riders.
trips = df[(df["bike_type"] == "electric") & (df["rider"] == "casual")]
print("casual electric trips:", len(trips))

# A trip with no end time (bike never docked) is left out.
trips = trips.dropna(subset=["ended_at"])
started = pd.to_datetime(trips["started_at"], format="%Y-%m-%d %H:%M:%S")
ended = pd.to_datetime(trips["ended_at"], format="%Y-%m-%d %H:%M:%S")
seconds = (ended - started).dt.total_seconds()

# Trips shorter than 60 s (false starts, and negative clock errors) are left out;
# a trip of exactly 60 s counts.
seconds = seconds[seconds >= 60]
print("trips used:", len(seconds))

answer = float(seconds.mean() / 60)
print("answer:", answer)
