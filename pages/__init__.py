"""The admin app's pages (run through ``st.navigation`` in app.py) and what they share."""
