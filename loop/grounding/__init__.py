"""Say only what is known: tool arguments narrowed to what the caller said (`arguments`), and spoken replies
checked against what the conversation holds (`speakable`); what a caller says that nothing answers but fixed
words, thanks, goodbye, "Brilliant." (`remarks`). The private modules read values out of words (`_heard`), names
out of words (`_names`), kinds out of schemas (`_arg_kinds`), an agent's scope (`_scope`) and a reply's facts
(`_facts`).
"""
