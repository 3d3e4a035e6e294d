import pandas as pd

shipments = pd.read_csv("data.csv", parse_dates=["ship_date", "delivered_date"])

# A shipment exported twice appears as an exact duplicate row: keep one copy.
shipments = shipments.drop_duplicates()

# Express shipments carried by QuickShip.
is_quick_express = (shipments["carrier"] == "QuickShip") & (shipments["service"] == "express")
quick_express = shipments[is_quick_express]

# Shipments without a delivery date have no transit time: leave them out.
delivered = quick_express.dropna(subset=["delivered_date"])
transit_days = (delivered["delivered_date"] - delivered["ship_date"]).dt.days
print("shipments:", len(quick_express), "with a delivery date:", len(delivered))

answer = round(transit_days.mean(), 2)
print("answer:", answer)
