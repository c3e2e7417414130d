"""Domain vocabulary shared by every layer: field keys, planes, structures, views (DESIGN §4)."""

from __future__ import annotations

AGENTS = ("IR", "IV", "AR")

# IR: clinical fields, in display order.
IR_FIELDS = (
    "sex", "age", "diagnosis", "comorbidities", "operation_name", "operation_date",
    "tumor_location", "height", "weight", "bmi", "pft",
)
# "All fields" means every key except operation_date.
IR_ALL_FIELDS = tuple(f for f in IR_FIELDS if f != "operation_date")
# Age and sex are one display item: asking for either shows both.
IR_LINKED = ({"sex", "age"},)

# IV
PLANES = ("axial", "coronal", "sagittal")
IV_MODES = ("none", "small_views", "zoom_view")
IV_DEFAULT_STEP = 10

# AR
LOBES = (
    "left_upper_lobe", "left_lower_lobe",
    "right_upper_lobe", "right_middle_lobe", "right_lower_lobe",
)
AR_STRUCTURES = (*LOBES, "lung_nodules", "trachea_bronchia")
AR_GROUPS = {
    "left_lung": ("left_upper_lobe", "left_lower_lobe"),
    "right_lung": ("right_upper_lobe", "right_middle_lobe", "right_lower_lobe"),
    "lungs": LOBES,
    "airway": ("trachea_bronchia",),
}
AR_ABBREVIATIONS = {
    "rul": "right_upper_lobe", "rml": "right_middle_lobe", "rll": "right_lower_lobe",
    "lul": "left_upper_lobe", "lll": "left_lower_lobe",
}
AR_VIEWS = ("anterior", "posterior", "left", "right", "superior", "inferior", "surgical")
AR_ROTATIONS = ("static", "left", "right", "up", "down", "horizontal", "vertical")

# Timings of AR animations in seconds (DESIGN §4).
AR_SWING_DEG = 30.0
AR_SWING_OUT_S, AR_SWING_HOLD_S, AR_SWING_BACK_S = 3.0, 1.0, 3.0
AR_TURN_S = 6.0
AR_ZOOM_S = 3.0
AR_ZOOM_FACTOR = 2.0

# CT window presets: name -> (width, level) in HU. Lung is the default (DESIGN §1).
WINDOW_PRESETS = {
    "lung": (1500, -600),
    "mediastinum": (350, 50),
    "soft_tissue": (400, 40),
    "bone": (2500, 480),
}

# Roles, least to most privileged. The circulating nurse drives the touch panel.
ROLES = ("observer", "nurse", "surgeon", "admin")
