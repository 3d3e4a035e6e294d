import pandas as pd

df = pd.read_csv("data.csv")
print("rows read:", len(df))

# Exact duplicate rows are double scans of the same loan: keep one copy.
df = df.drop_duplicates()
print("rows after removing duplicates:", len(df))

# DVD loans made in May 2024 (1 May and 31 May included).
loan = pd.to_datetime(df["loan_date"], format="%Y-%m-%d")
dvd_may = df[(df["item_type"] == "dvd") & (loan >= "2024-05-01") & (loan <= "2024-05-31")]
print("DVD loans made in May:", len(dvd_may))

# A blank return date means the DVD is still out: leave those loans out entirely.
returned = dvd_may.dropna(subset=["return_date"])
print("of which returned:", len(returned))

# Late means returned after the due date; a return on the due date is on time.
ret = pd.to_datetime(returned["return_date"], format="%Y-%m-%d")
due = pd.to_datetime(returned["due_date"], format="%Y-%m-%d")
late = int((ret > due).sum())
print("returned late:", late)

answer = 100 * late / len(returned)
print("answer:", answer)
