# Golden values for vcost.stats.korn_graubard from R's survey::svyciprop(method = "beta").
# Run: Rscript tests/reference/korn_graubard.R   (Debian: apt-get install r-base-core r-cran-survey)
# Paste the printed lines into tests/stats/test_korn_graubard_r.py. R is not needed by the tests.
suppressPackageStartupMessages(library(survey))
options(digits = 15, warn = -1)

case <- function(name, sizes, events, level = 0.95) {
  psu <- rep(seq_along(sizes), sizes)
  y <- unlist(mapply(function(m, e) c(rep(1, e), rep(0, m - e)), sizes, events, SIMPLIFY = FALSE))
  d <- svydesign(ids = ~psu, data = data.frame(event = y, psu = psu))
  ci <- svyciprop(~event, d, method = "beta", level = level)
  m <- svymean(~event, d)
  n_eff <- coef(m) * (1 - coef(m)) / vcov(m)
  cat(sprintf("%s: level=%.2f lower=%.12f upper=%.12f n_eff_before_df=%.12f degf=%d R_survey=%s\n",
              name, level, attr(ci, "ci")[1], attr(ci, "ci")[2], n_eff, degf(d),
              as.character(packageVersion("survey"))))
}

case("issue-13-of-50", rep(5, 10), c(5, 3, 3, 2, 0, 0, 0, 0, 0, 0))
case("issue-13-of-50-90", rep(5, 10), c(5, 3, 3, 2, 0, 0, 0, 0, 0, 0), level = 0.90)
case("unequal", c(3, 4, 5, 6, 2, 8, 4, 7), c(1, 0, 2, 3, 0, 1, 0, 2))
case("rare", c(6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6), c(2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
case("deff-below-1", rep(4, 6), c(1, 1, 1, 2, 1, 1))
case("singletons", rep(1, 30), c(rep(1, 4), rep(0, 26)))
