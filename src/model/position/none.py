# `none` in the Hugging Face remote code (see none.cpp): no position term and no module; with
# absolute: false the model is a bag of words.
register_scheme("none", None)
