import pandas as pd

students = pd.read_csv("data.csv")

# Rows entered twice are exact duplicates: keep one copy of each.
students = students.drop_duplicates()

# Grade 10 students who sat the math test (a missing score means absent: left out).
grade10 = students[(students["grade"] == 10) & students["math_score"].notna()]

# Pass = a math score of 50 or more; pass rate per school, in percent.
passed = grade10["math_score"] >= 50
rates = passed.groupby(grade10["school"]).mean() * 100
print(rates.round(2))

answer = round(rates.max(), 2)
print("answer:", answer, "school:", rates.idxmax())
