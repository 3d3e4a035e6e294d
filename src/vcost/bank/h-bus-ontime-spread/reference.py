import pandas as pd

trips = pd.read_csv("data.csv")

# A trip logged more than once: the later row is a correction, so keep the last row per trip_id.
trips = trips.drop_duplicates(subset="trip_id", keep="last")

# Weekday service only (Monday=0 ... Friday=4).
weekday = pd.to_datetime(trips["service_date"]).dt.day_of_week < 5
trips = trips[weekday]


def to_minutes(clock):
    return clock.str[:2].astype(float) * 60 + clock.str[3:].astype(float)


# Delay in minutes; a bus that left after midnight shows a delay below -720: add a day.
delay = to_minutes(trips["actual_departure"]) - to_minutes(trips["scheduled_departure"])
delay = delay.where(delay >= -720, delay + 1440)

# On time = from 1 minute early to 5 minutes late, inclusive. A cancelled trip (no actual
# departure) has a missing delay, so it compares False: it stays in the count as not on time.
on_time = (delay >= -1) & (delay <= 5)
rates = on_time.groupby(trips["route"]).mean() * 100
print(rates.round(2))

answer = round(rates.max() - rates.min(), 2)
print("answer:", answer)
