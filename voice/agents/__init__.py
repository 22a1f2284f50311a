"""What `--agent` names: an agent file (`spec`) or a Python factory, loaded into one `loop.Agent` per call
(`source`), and the scripted replies an agent file may carry (`looping_script`).
"""
