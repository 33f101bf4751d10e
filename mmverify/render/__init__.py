"""Results for people: plain-text and Markdown tables (:mod:`.tables`), the
frame every HTML page shares (:mod:`.htmlpage`) and one run's report page
(:mod:`.report_html`)."""
