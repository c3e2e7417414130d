"""Exemplar phrasings for the semantic matcher (tier 3, DESIGN §3).

Every console action (``app.core.actions``) is reachable from at least one *intent*; every
intent has many phrasings the way a surgical team says it: terse and verbose, questions,
wishes, indirect requests, British and American wording. The matcher embeds them once (cached
on disk) and trains a small classifier on them that scores the intents of a spoken command.

An intent is (agent, kind, defaults):

- ``agent`` is "IR" | "IV" | "AR", or ``None`` for phrasings that name no agent ("closer
  still", "start over"): the agent then comes from the lexicon's routing, i.e. the words of the
  clause or the memory of DESIGN §4.
- ``kind`` is the lexicon's clause intent (show, hide, reset, zoom_in, zoom_out, move, rotate,
  add) plus ``remove_part`` (structures or fields taken away) and ``oos``.
- ``defaults`` are parameters the phrasing implies without saying them in the grammar's words
  (a view, a rotation, a window, a field, a direction, a named position). Explicit slots found
  by the lexicon in the user's words (numbers, planes, structures, fields…) take precedence;
  see ``app.agents.semantic``.

The ``oos`` intents are the negative class: OR chatter, surgical manipulation, staff talk,
patient-status remarks and requests for data the console does not hold. Several of them
deliberately share words with real commands (lung, lobe, CT, rotate, left…) so that a remark
*about* the anatomy is not mistaken for a request to *show* it.

These phrasings were written for this file; they are not taken from any dataset split.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any


@dataclass(frozen=True)
class Intent:
    key: str
    agent: str | None  # "IR" | "IV" | "AR" | None (from routing) | "OOS"
    kind: str
    defaults: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    # The plan needs slots from the user's words (a structure to add, a slice number):
    # without them the intent cannot produce a plan.
    needs_words: bool = False
    phrases: tuple[str, ...] = ()
    # Intents that differ only in a parameter the user may also speak (a view, a direction,
    # a field): within a family a parameter found in the user's words wins over the implied
    # one, because embeddings barely separate "left" from "right" while the words do.
    family: str = ""

    def __post_init__(self) -> None:
        if not self.family:
            object.__setattr__(self, "family", family_of(self.key))

    def param(self, name: str) -> Any:
        return self.defaults.get(name)


_FAMILIES = {
    "ir.show.": "ir.show", "iv.pos.": "iv.pos", "iv.window.": "iv.window", "ar.view.": "ar.view",
    "iv.move.up": "iv.dir", "iv.move.down": "iv.dir", "iv.move.left": "iv.dir",
    "iv.move.right": "iv.dir", "iv.move.forward": "iv.dir", "iv.move.back": "iv.dir",
    "ar.rotate.left": "ar.swing", "ar.rotate.right": "ar.swing", "ar.rotate.up": "ar.swing",
    "ar.rotate.down": "ar.swing", "ar.rotate.horizontal": "ar.turn",
    "ar.rotate.vertical": "ar.turn",
}


def family_of(key: str) -> str:
    for prefix, fam in _FAMILIES.items():
        if key == prefix or (prefix.endswith(".") and key.startswith(prefix)):
            return fam
    return key


def _intent(key: str, agent: str | None, kind: str, phrases: str, needs_words: bool = False,
            **defaults: Any) -> Intent:
    lines = tuple(p.strip() for p in phrases.strip().splitlines() if p.strip())
    return Intent(key, agent, kind, MappingProxyType(dict(defaults)), needs_words, lines,
                  family_of(key))


# ---------------------------------------------------------------------------------------------
# IR: patient information
# ---------------------------------------------------------------------------------------------

_IR = [
    _intent("ir.show.all", "IR", "show", """
        show the patient information
        patient info please
        bring up the patient's data
        can I see the clinical summary
        put the patient details on the screen
        display her chart
        open the patient record
        what do we know about this patient
        give me the patient overview
        let's have the patient's information up
        show me everything about the patient
        pull up his clinical details
        patient summary
        I want to see the patient's profile
        could you put up the case information
        show all the patient fields
        remind me about this patient
        bring the patient box up
        clinical data on screen please
        tell me about the patient
        show the whole patient sheet
        can we have the patient card up
        full patient details please
        display all the clinical information we have
    """),
    _intent("ir.show.age_sex", "IR", "show", """
        how old is the patient
        what's her age
        show the patient's age
        is the patient male or female
        age and sex please
        what gender is the patient
        how old is he
        display age and gender
        tell me the patient's age
        sex of the patient
        what age is she
        how many years old is the patient
        put the age up
        the patient's demographics
        when was the patient born
    """, fields=("age", "sex")),
    _intent("ir.show.diagnosis", "IR", "show", """
        what's the diagnosis
        show the diagnosis
        what is the patient being treated for
        why is the patient having surgery
        what does the patient have
        remind me of the diagnosis
        what disease are we dealing with
        what kind of cancer is it
        what's the pathology they suspect
        what's wrong with the patient
        show me what she was diagnosed with
        the indication for surgery
        what's the primary problem
        what condition brings him here
        display the working diagnosis
    """, fields=("diagnosis",)),
    _intent("ir.show.comorbidities", "IR", "show", """
        show the comorbidities
        any other medical problems
        what's her past medical history
        does the patient have other diseases
        other conditions please
        what else does he suffer from
        background medical history
        any underlying illnesses
        show his co-morbid conditions
        is she diabetic or hypertensive
        what chronic diseases does the patient have
        list the patient's other health problems
        any relevant history
        remind me of his medical background
        what other diagnoses does she carry
    """, fields=("comorbidities",)),
    _intent("ir.show.operation_name", "IR", "show", """
        what operation are we doing
        show the planned procedure
        what's the name of the operation
        which surgery is planned
        what procedure is scheduled
        display the operation
        what are we doing today
        remind me of the planned surgery
        what type of resection is planned
        the procedure name please
        which operation is booked
        what's the surgical plan
    """, fields=("operation_name",)),
    _intent("ir.show.operation_date", "IR", "show", """
        what's the date of the operation
        show the operation date
        when is the surgery
        when was the operation scheduled
        which day is the procedure
        surgery date please
        display the date of surgery
        what day was the operation planned for
        when are we operating
        the scheduled date
    """, fields=("operation_date",)),
    _intent("ir.show.tumor_location", "IR", "show", """
        where is the tumor located
        show the tumor location
        which lobe is the tumour in
        where's the lesion
        in which lobe is the cancer
        what side is the tumor on
        location of the mass please
        which segment is involved
        where exactly is the nodule
        show me where the tumour sits
        tumor site
        which lung has the cancer
    """, fields=("tumor_location",)),
    _intent("ir.show.height", "IR", "show", """
        how tall is the patient
        what's her height
        show the height
        height please
        how tall is he
        the patient's height in centimetres
        display his stature
    """, fields=("height",)),
    _intent("ir.show.weight", "IR", "show", """
        how much does the patient weigh
        what's his weight
        show the weight
        weight please
        body weight
        how heavy is she
        display the patient's weight in kilos
    """, fields=("weight",)),
    _intent("ir.show.bmi", "IR", "show", """
        what's the BMI
        show the body mass index
        BMI please
        what is her body mass index
        display the patient's BMI
        is the patient obese
        how overweight is he
    """, fields=("bmi",)),
    _intent("ir.show.physical", "IR", "show", """
        show the physical information
        height weight and BMI
        body measurements please
        the patient's size
        show her physical data
        how big is the patient
        display his anthropometrics
        the physical stats
        show the body habitus numbers
    """, fields=("height", "weight", "bmi")),
    _intent("ir.show.pft", "IR", "show", """
        show the PFT
        what are the pulmonary function results
        show me the lung function
        spirometry please
        what's the FEV1
        how were the breathing tests
        display the pulmonary function tests
        what's her FVC and DLCO
        lung function values
        how good is his lung function
        what did the spirometry show
        the respiratory function numbers
        how much lung reserve does she have
        preoperative lung function please
    """, fields=("pft",)),
    _intent("ir.hide", "IR", "hide", """
        hide the patient information
        close the patient info
        remove the patient box
        clear the clinical data
        take the patient details away
        I don't need the patient info anymore
        get the patient information off the screen
        dismiss the chart
        turn off the patient panel
        that's enough patient info, hide it
        no more patient details
        put the patient sheet away
        patient info off
        lose the text box
        we can close the patient summary now
    """),
    _intent("ir.remove_field", "IR", "remove_part", """
        hide the BMI
        remove the weight from the box
        take the age off
        I don't need the diagnosis shown
        drop the PFT from the patient info
        clear the height
        get rid of the operation date
    """, needs_words=True),
    _intent("ir.reset", "IR", "reset", """
        reset the patient information
        reset the patient info to default
        initialize the clinical data
        restore all the patient fields
        put the patient box back to normal
        patient information back to the default
        start the patient info over
        restore the patient summary to how it was
    """),
]

# ---------------------------------------------------------------------------------------------
# IV: CT viewer
# ---------------------------------------------------------------------------------------------

_IV = [
    _intent("iv.show", "IV", "show", """
        show the CT
        bring up the scan
        open the CT images
        let me see the CT scan
        display the imaging
        can we have the CT on screen
        put the scans up
        show me the chest CT
        I want to look at the CT
        pull up the radiology
        CT please
        load the CT views
        show the scan slices
        can I see the images
        let's look at the CT
        get the CT back on the screen
        bring the scan back
        display the multiplanar views
        show the axial coronal and sagittal views
        open the tomography
    """),
    _intent("iv.move.up", "IV", "move", """
        move up
        scroll up
        go up a few slices
        move the axial up
        go higher on the axial
        scroll towards the head
        go cranially
        move superior on the CT
        up ten slices
        scroll up a bit more
        a little more superior
        go up by twenty
        move up on the scan
        page up
        up a little
        towards the apex please
    """, dir="up"),
    _intent("iv.move.down", "IV", "move", """
        move down
        scroll down
        go down a few slices
        move the axial down
        go lower on the axial
        scroll towards the feet
        go caudally
        move inferior on the CT
        down ten slices
        scroll down a bit
        a touch lower
        go down by twenty
        page down
        down a little
        towards the diaphragm
        move down on the scan
    """, dir="down"),
    _intent("iv.move.left", "IV", "move", """
        move left
        go left on the sagittal
        scroll to the left
        move the sagittal left
        left ten slices
        a bit more to the left
        go left by twenty
        shift the sagittal to the left
        step left
        towards the patient's left side
    """, dir="left"),
    _intent("iv.move.right", "IV", "move", """
        move right
        go right on the sagittal
        scroll to the right
        move the sagittal right
        right ten slices
        a bit more to the right
        go right by twenty
        shift the sagittal to the right
        step right
        towards the patient's right side
    """, dir="right"),
    _intent("iv.move.forward", "IV", "move", """
        move forward
        go anterior on the coronal
        scroll forward
        move the coronal forward
        go more anterior
        forward ten slices
        towards the front of the chest
        move the coronal towards the sternum
        a bit further forward
        step anteriorly
    """, dir="forward"),
    _intent("iv.move.back", "IV", "move", """
        move back
        go posterior on the coronal
        scroll backward
        move the coronal back
        go more posterior
        back ten slices
        towards the back of the chest
        move the coronal towards the spine
        a bit further back
        step posteriorly
    """, dir="back"),
    _intent("iv.move.plane", "IV", "move", """
        coronal plus 100
        axial minus 20
        sagittal plus 30
        increase the axial by 15
        decrease the coronal by 40
        add 50 to the sagittal
        take 10 off the axial
        advance the coronal 25 slices
        bump the axial up by 5
    """, needs_words=True),
    _intent("iv.move.absolute", "IV", "move", """
        go to slice 40
        move axial to 120
        sagittal 200
        set the coronal to 300
        take the axial to slice 80
        jump to slice 50
        coronal slice 250 please
        move to 10, 20, 50
        put the sagittal at 180
        show axial 30
        go to image number 90
        position the coronal at 220
    """, needs_words=True),
    _intent("iv.pos.middle", "IV", "move", """
        go to the middle slice
        centre the axial
        move the coronal to the middle
        take it to the midpoint
        middle of the stack please
        back to the centre slice
        halfway through the sagittal
        put all planes in the middle
        the central slice
    """, position="middle"),
    _intent("iv.pos.max", "IV", "move", """
        go to the last slice
        move the axial to the top
        maximum coronal
        all the way to the end
        the highest slice
        jump to the final image
        go to the very top of the scan
    """, position="max"),
    _intent("iv.pos.min", "IV", "move", """
        go to the first slice
        move the axial to the bottom
        minimum sagittal
        back to the start of the stack
        the lowest slice
        jump to the first image
        go to the very bottom of the scan
    """, position="min"),
    _intent("iv.zoom_in", "IV", "zoom_in", """
        zoom in on the axial
        enlarge the coronal
        make the sagittal bigger
        zoom into the CT
        blow up the axial view
        can I see the coronal larger
        give me the sagittal full screen
        I want the axial view big
        magnify the coronal image
        put the sagittal in the main view
        show me a bigger CT
        expand the axial
        maximise the coronal
        let me see the sagittal up close
        the coronal as the main picture
        closer look at the axial slice
    """),
    _intent("iv.zoom_out", "IV", "zoom_out", """
        zoom out of the CT
        back to the small views
        show all three views
        make the CT smaller
        shrink the scan
        return to the three panels
        the small CT views again
        minimise the big view
        undo the CT zoom
        go back to the overview of all planes
        the three little pictures
        put the CT back to small
        exit the full screen CT
    """),
    _intent("iv.remove", "IV", "hide", """
        remove the CT
        hide the scan
        close the CT views
        clear the imaging
        take the CT off the screen
        I'm done with the scan
        get rid of the CT
        no more CT
        turn the scan off
        put the images away
        dismiss the radiology
        lose the CT
        clear all the CT views
    """),
    _intent("iv.reset", "IV", "reset", """
        reset the CT
        initialize the scan
        CT back to default
        restore the CT to the middle slices
        reset all the planes
        start the CT again from the beginning
        back to the default CT layout
        reset the imaging views
        put the scan back to how it started
    """),
    _intent("iv.window.lung", "IV", "move", """
        lung window
        switch to the lung window
        use the lung setting
        pulmonary window please
        parenchyma window
        go back to the lung preset
        I want to see the lung parenchyma contrast
        set the CT to lung windowing
    """, window="lung"),
    _intent("iv.window.mediastinum", "IV", "move", """
        mediastinal window
        switch to the mediastinum window
        mediastinal setting please
        show the mediastinum contrast
        use the mediastinal preset
        window for the mediastinum
        I want to see the lymph node window
    """, window="mediastinum"),
    _intent("iv.window.soft_tissue", "IV", "move", """
        soft tissue window
        switch to soft tissue
        soft tissue setting please
        use the soft tissue preset
        abdomen style soft tissue contrast
        give me soft tissue windowing
    """, window="soft_tissue"),
    _intent("iv.window.bone", "IV", "move", """
        bone window
        switch to the bone window
        bone setting please
        use the bone preset
        show the ribs with bone windowing
        skeletal window
    """, window="bone"),
]

# ---------------------------------------------------------------------------------------------
# AR: 3D anatomy
# ---------------------------------------------------------------------------------------------

_AR = [
    _intent("ar.show", "AR", "show", """
        show the 3D model
        bring up the lung model
        display the 3D anatomy
        let me see the reconstruction
        open the 3D view
        can we have the model up
        put the 3D lungs on the screen
        show me the anatomy
        I want to see the 3D rendering
        load the model
        the 3D please
        bring the model back
        get the 3D reconstruction up
        show the segmentation
        can I see the model again
        display the hologram of the lungs
    """),
    _intent("ar.show.structures", "AR", "show", """
        show only the right lung
        just the left lower lobe
        display the right upper lobe alone
        show me the nodules only
        only the airway please
        show the left lung on the model
        I want just the tumor lobe
        show the right middle and lower lobes
        display the trachea and bronchi
        the RUL only
    """, needs_words=True),
    _intent("ar.add", "AR", "add", """
        add the airway
        also show the left lung
        include the nodules
        add the right lower lobe to the model
        put the trachea in too
        show the bronchi as well
        add the RML
        and the left upper lobe
        bring the nodules back
        plus the airway
    """, needs_words=True),
    _intent("ar.remove_part", "AR", "remove_part", """
        hide the airway
        remove the left lung from the model
        take the nodules out
        hide the right lower lobe
        without the trachea
        get rid of the left lobes
        drop the RML
        I don't want the bronchi
        exclude the lower lobes
    """, needs_words=True),
    _intent("ar.view.anterior", "AR", "show", """
        anterior view
        show the model from the front
        front view please
        look at it from the front
        turn the model to face me
        the anterior aspect
        view it from the sternum side
    """, view="anterior"),
    _intent("ar.view.posterior", "AR", "show", """
        posterior view
        show the model from behind
        back view please
        look at it from the back
        turn the model around to the back side
        the posterior aspect
        view it from the spine side
    """, view="posterior"),
    _intent("ar.view.left", "AR", "show", """
        left view
        show the model from the left side
        left lateral view
        look at it from the left
        the left side of the model
        view from the patient's left
    """, view="left"),
    _intent("ar.view.right", "AR", "show", """
        right view
        show the model from the right side
        right lateral view
        look at it from the right
        the right side of the model
        view from the patient's right
    """, view="right"),
    _intent("ar.view.superior", "AR", "show", """
        superior view
        show the model from above
        top view please
        look at it from the top
        bird's eye view of the model
        view from the head end
        look down on the model
    """, view="superior"),
    _intent("ar.view.inferior", "AR", "show", """
        inferior view
        show the model from below
        bottom view please
        look at it from underneath
        view from the diaphragm side
        the underside of the model
        look up at the model from the feet
    """, view="inferior"),
    _intent("ar.view.surgical", "AR", "show", """
        surgical view
        back to the surgical view
        show the surgeon's view
        the operative perspective
        default view of the model
        the console view please
        the standard view again
        view it like we see it in surgery
    """, view="surgical"),
    _intent("ar.rotate.left", "AR", "rotate", """
        rotate to the left
        rotate the model left
        swing it to the left
        turn the model to the left
        rotate left a bit
        turn it anticlockwise
        swivel the model leftwards
    """, direction="left"),
    _intent("ar.rotate.right", "AR", "rotate", """
        rotate to the right
        rotate the model right
        swing it to the right
        turn the model to the right
        rotate right a bit
        turn it clockwise
        swivel the model rightwards
    """, direction="right"),
    _intent("ar.rotate.up", "AR", "rotate", """
        rotate up
        tilt the model up
        swing it upwards
        turn the model upward
        rotate the top toward me
        tip it up
    """, direction="up"),
    _intent("ar.rotate.down", "AR", "rotate", """
        rotate down
        tilt the model down
        swing it downwards
        turn the model downward
        rotate the top away from me
        tip it down
    """, direction="down"),
    _intent("ar.rotate.horizontal", "AR", "rotate", """
        rotate horizontally
        spin the model
        turn it all the way around
        do a full 360
        rotate the model around
        spin it around horizontally
        give it a full turn
        let it revolve like a turntable
        show it from all sides
        start the model spinning
    """, direction="horizontal"),
    _intent("ar.rotate.vertical", "AR", "rotate", """
        rotate vertically
        flip the model over
        turn it head over heels
        spin it vertically
        rotate it top to bottom
        roll it over vertically
        tumble the model
    """, direction="vertical"),
    _intent("ar.rotate.static", "AR", "rotate", """
        stop the rotation
        stop spinning
        hold the model still
        freeze the model
        no more rotating
        stop turning it
        keep it static
        leave it still
    """, direction="static"),
    _intent("ar.zoom_in", "AR", "zoom_in", """
        zoom in on the model
        zoom into the nodule
        get closer to the tumor
        magnify the 3D model
        enlarge the right upper lobe
        zoom in on the airway
        take me closer to the lesion
        make the model bigger
        focus on the nodule
        closer view of the left lung
        blow up the model
    """),
    _intent("ar.zoom_out", "AR", "zoom_out", """
        zoom out of the model
        make the model smaller
        zoom the 3D out
        back away from the model
        go further out on the 3D
        shrink the model
        pull back from the nodule
        wider view of the model
        less zoom on the anatomy
    """),
    _intent("ar.remove", "AR", "hide", """
        hide the model
        remove the 3D model
        clear the anatomy
        turn off the 3D
        take the model off the screen
        get rid of the model
        erase everything on the model
        close the reconstruction
        no more 3D
        put the model away
        remove all the structures
    """),
    _intent("ar.reset", "AR", "reset", """
        reset the model
        reset the 3D view
        initialize the anatomy
        restore the model to default
        model back to how it was at the start
        start the 3D over
        return the model to its original state
        default model please
    """),
]

# ---------------------------------------------------------------------------------------------
# No agent named: resolved by routing (words of the clause, then memory)
# ---------------------------------------------------------------------------------------------

_ANY = [
    _intent("any.zoom_in", None, "zoom_in", """
        zoom in
        closer
        make it bigger
        go in closer
        a bit closer please
        magnify
        enlarge it
        let me see it up close
        get in tighter
        can you zoom
        more zoom
        bigger please
        come in a bit
    """),
    _intent("any.zoom_out", None, "zoom_out", """
        zoom out
        too close
        make it smaller
        go out a bit
        further away please
        back out
        shrink it
        less zoom
        pull out a little
        not so big
        smaller please
        take it back out
    """),
    _intent("any.reset", None, "reset", """
        reset
        start over
        back to default
        initialize
        restore it
        back to the beginning
        put it back the way it was
        reset everything
        undo all of that and start fresh
        back to normal
    """),
    _intent("any.remove", None, "hide", """
        remove
        hide it
        clear
        take it away
        get rid of it
        close it
        I don't need that anymore
        off the screen
        put it away
        enough of that
        turn it off
        clear everything
    """),
]

# ---------------------------------------------------------------------------------------------
# Out of scope: the negative class
# ---------------------------------------------------------------------------------------------

_OOS = [
    _intent("oos.instruments", "OOS", "oos", """
        prepare the stapler
        give me the vessel sealer
        load a new cartridge
        can I have the bipolar forceps
        swap instruments on arm three
        we need another clip applier
        hand me the scissors
        get the suction ready
        irrigate please
        more sponges
        pass me a suture
        open a new specimen bag
        I need a longer grasper
        where is the hook cautery
    """),
    _intent("oos.surgical_action", "OOS", "oos", """
        retract the upper lobe
        divide the fissure
        staple the bronchus
        dissect along the artery
        clip that vessel
        cut here
        grab the lung and pull it down
        lift the lobe up
        push the lung out of the way
        take down the inferior ligament
        we'll resect the lobe now
        let's start the dissection
        tie it off
        seal that branch
        hold the tissue up for me
        let's convert to open
        I'm going to fire across the vein
    """),
    _intent("oos.robot_camera", "OOS", "oos", """
        move the camera up
        rotate the camera to the left
        zoom the endoscope in
        clean the scope
        reposition the robot arm
        undock the robot
        switch to the thirty degree scope
        the camera is fogging up
        move arm two out of the way
        turn on the firefly mode
        start recording the video
        take a screenshot
        adjust the port placement
        rotate the instrument wrist to the right
        turn the grasper jaws up
        swing arm three out to the left
        tilt the operating table to the right
        roll the table towards me
        rotate the stapler head
        bring arm one back
        angle the scope down
    """),
    _intent("oos.patient_status", "OOS", "oos", """
        the patient is coughing
        is the patient stable
        what's the blood pressure
        how is her saturation
        what's the heart rate
        is he moving
        the patient seems to be waking up
        how much blood have we lost
        the pressure is dropping
        she's desaturating
        what's the temperature
        is the end tidal CO2 okay
        the lung isn't collapsing well
        the lung is reinflating
        there's a lot of bleeding here
        the tissue looks inflamed
    """),
    _intent("oos.unheld_data", "OOS", "oos", """
        show her allergies
        what's the blood type
        what medications is he on
        what's the potassium level
        show the latest lab results
        what's the hemoglobin
        any drug allergies
        is the frozen section back
        what did pathology say
        show the MRI
        show the PET scan
        what is the patient's name
        what's the medical record number
        show the heart on the model
        show the liver
        where is the pulmonary artery on the model
        is the consent signed
        who is the next of kin
        does she smoke
    """),
    _intent("oos.staff", "OOS", "oos", """
        call the anesthesiologist
        page the pathologist
        tell the family we are almost done
        ask the nurse to come in
        who's the scrub nurse today
        call radiology
        get the attending on the phone
        send a message to the ward
        let the ICU know we'll need a bed
        tell anaesthesia we're closing
    """),
    _intent("oos.room", "OOS", "oos", """
        dim the lights
        turn on the room lights
        raise the table
        tilt the bed to the left
        it's cold in here
        turn up the music
        play some music
        turn the volume down
        open the door
        can someone adjust the thermostat
        lower the operating table
    """),
    _intent("oos.chatter", "OOS", "oos", """
        thank you
        thanks that's all
        good job everyone
        nice work
        how are you today
        what time is it
        what's the weather like
        let's take a break
        I'm hungry
        did you see the game last night
        good morning team
        okay let's get started
        give me a second
        hmm let me think
        that looks good
        perfect
        alright
        wait
        never mind
        sorry, go on
        let's wait for anaesthesia
        we're running late today
        I'll be right back
        who wants coffee
        how long have we been going
        is everyone ready
    """),
    _intent("oos.remarks", "OOS", "oos", """
        the nodule looks smaller than on the scan
        the upper lobe is quite adherent
        the fissure is incomplete
        this lobe looks healthy
        the tumor feels hard
        the CT was done two months ago
        the scan was from another hospital
        the model looks nice
        I think the lesion is deeper than we thought
        the left lung is collapsed nicely
        the anatomy is a bit unusual here
        the airway looks normal
        the bronchus is shorter than expected
        the lower lobe has some adhesions
        the imaging quality is poor
        this is a tricky case
        I've seen this anatomy before
        the right lung is stuck to the chest wall
        we might have to take the middle lobe too
        the CT suggested a smaller tumour
    """),
]

# ---------------------------------------------------------------------------------------------
# More phrasings per intent (same intents as above; kept apart so the blocks stay readable)
# ---------------------------------------------------------------------------------------------

_MORE: dict[str, str] = {
    "ir.show.all": """
        show me the patient
        I need the patient information up
        can you show the case details
        what's the clinical background on this one
        put the patient's summary on the monitor
        give me all the info on her
        display everything we have on the patient
        the patient panel please
        could I see the patient data
        the clinical details on screen
        bring the patient information back
        let me see the patient's file
        show the patient's case summary
        patient overview on the screen please
        what's the story with this patient
        show me the pre-op summary
    """,
    "ir.show.age_sex": """
        how old is she
        what's the patient's age and sex
        age please
        remind me how old he is
        male or female
        is it a man or a woman
        what year was she born
        show the demographics
        put up the age and gender
        the patient's age
    """,
    "ir.show.diagnosis": """
        what are we operating for
        what's the reason for the surgery
        remind me why we're here
        why is he being operated on
        show me the diagnosis please
        what did they diagnose
        what's the histology on the referral
        is it adenocarcinoma
        what kind of tumour does she have
        the patient's diagnosis
        what's the indication
    """,
    "ir.show.comorbidities": """
        what other problems does she have
        does he have any heart or lung disease
        any diabetes or hypertension
        what's in his history
        past history please
        comorbid conditions
        any significant comorbidities
        what else is going on with this patient
        show her other medical conditions
        does the patient have COPD
    """,
    "ir.show.operation_name": """
        what's the planned operation
        which procedure is this
        what are we doing to this patient
        show me the procedure name
        name of the surgery please
        what resection are we doing
        is this a lobectomy or a segmentectomy
        the planned procedure
        remind me of the operation
    """,
    "ir.show.operation_date": """
        operation date
        what day is the operation
        when was this case booked
        show me the surgery date
        the date of the procedure
        when is she scheduled
        which date was the surgery set for
    """,
    "ir.show.tumor_location": """
        where's the tumour
        which lobe has the lesion
        remind me where the tumor is
        the tumour's location
        where is the cancer
        where did they find the mass
        which side is it on
        which lobe are we after
        what's the location of the lesion
        in which part of the lung is the mass
    """,
    "ir.show.height": """
        her height
        what height is the patient
        patient height please
        how tall
        show his height
        what's the patient's height in cm
    """,
    "ir.show.weight": """
        her weight
        what does he weigh
        patient weight please
        show his weight
        what's her body weight in kg
        how much does she weigh
    """,
    "ir.show.bmi": """
        her BMI
        body mass index please
        show the BMI value
        what's his BMI
        patient BMI
        how big is her body mass index
    """,
    "ir.show.physical": """
        height and weight
        show height weight and body mass index
        the physical measurements
        how big is she
        her body size please
        show the body stats
        display the anthropometric data
        physical info
    """,
    "ir.show.pft": """
        pulmonary function please
        what are the PFTs
        show me the FEV1 and FVC
        how's her lung function
        what's his DLCO
        the lung function test results
        how did he do on spirometry
        show the breathing test results
        what was the FEV1 percent predicted
        lung function tests
        respiratory function please
        can she tolerate a lobectomy, what's her lung function
    """,
    "ir.hide": """
        hide the patient data
        close the clinical info
        remove the patient details
        take off the patient information
        patient box off
        hide the info panel
        clear the patient panel
        no more patient info please
        get rid of the clinical summary
        hide the chart
        close the text box
        remove the patient summary from the screen
        switch off the patient details
        we're done with the patient info
    """,
    "ir.remove_field": """
        remove the BMI from the patient info
        take the weight off the box
        hide the height
        no need for the PFT anymore
        drop the diagnosis
        remove the age
        take off the comorbidities
        hide the operation date from the info
    """,
    "ir.reset": """
        reset the patient box
        reset the clinical info
        restore the default patient information
        patient details back to default
        initialize the patient panel
        put all the default patient fields back
        reset the info box
    """,
    "iv.show": """
        show me the CT
        the scan please
        open up the scan
        put the CT on the screen
        let's see the images
        show the CT views
        can I see the scan
        bring the CT up
        display the CT
        imaging please
        show me the pictures of the chest
        open the radiology images
        I'd like to see the CT
        CT on screen
        the chest scan please
        put the imaging up
        show the slices
        let me look at the scan
        can you display the scans
    """,
    "iv.move.up": """
        go up
        up please
        a little higher
        scroll up ten
        move superiorly
        up twenty slices
        go up on the CT
        further up
        higher please
        up a few
        move up by five
        move the slice up
        up one step
        go towards the top of the chest
    """,
    "iv.move.down": """
        go down
        down please
        a little lower
        scroll down ten
        move inferiorly
        down twenty slices
        go down on the CT
        further down
        lower please
        down a few
        move down by five
        move the slice down
        down one step
        go towards the bottom of the chest
    """,
    "iv.move.left": """
        go left
        left please
        a little to the left
        scroll left ten
        left twenty slices
        further left
        more to the left
        move the slice left
        left a few
        move left by five
    """,
    "iv.move.right": """
        go right
        right please
        a little to the right
        scroll right ten
        right twenty slices
        further right
        more to the right
        move the slice right
        right a few
        move right by five
    """,
    "iv.move.forward": """
        go forward
        forward please
        a little more forward
        scroll forward ten
        forward twenty slices
        further forward
        more anterior please
        move the coronal anteriorly
        forward a few
        move forward by five
        go to the front
    """,
    "iv.move.back": """
        go back
        back please
        a little more back
        scroll back ten
        back twenty slices
        further back
        more posterior please
        move the coronal posteriorly
        back a few
        move back by five
        go towards the back
    """,
    "iv.move.plane": """
        sagittal minus 50
        axial plus 10
        coronal minus 30
        the axial up 25 slices
        coronal down by 12
        move the sagittal by minus 20
        increase the coronal slice by 10
        decrease the sagittal by 15
        add 30 to the coronal
        plus 40 on the axial
        minus 10 on the sagittal
    """,
    "iv.move.absolute": """
        axial 60
        coronal 300
        go to axial slice 70
        move the sagittal to 150
        show me slice 45
        set the axial to 100
        slice 20 please
        coronal to 250
        jump to sagittal 400
        move to 30, 200, 300
        go to position 80 on the axial
        take the coronal to 210
        show slice number 12 of the axial
    """,
    "iv.pos.middle": """
        middle slice
        go to the middle
        centre it
        the middle of the axial
        sagittal to the midline
        coronal middle
        back to the middle
        centre all the planes
        midpoint of the coronal
        put the axial in the middle
    """,
    "iv.pos.max": """
        last slice
        the top slice
        go to the max
        axial maximum
        the very last image
        all the way up to the end
        sagittal to the end
        top of the stack
    """,
    "iv.pos.min": """
        first slice
        the bottom slice
        go to the minimum
        axial minimum
        the very first image
        all the way down to the start
        coronal to the first slice
        bottom of the stack
    """,
    "iv.zoom_in": """
        zoom in on the coronal
        enlarge the sagittal view
        make the axial large
        the coronal big please
        can you enlarge the CT
        zoom the scan in
        full screen the axial
        make the CT bigger
        coronal full screen
        enlarge the scan image
        bigger axial please
        zoom into the sagittal slice
        show the axial in the big view
        give me a large coronal
        blow the sagittal up
        can we have the CT larger
    """,
    "iv.zoom_out": """
        make the scan small again
        shrink the CT
        small views please
        back to three views
        zoom the CT out
        the small views
        go back to the small CT pictures
        take the CT out of full screen
        reduce the CT view
        show all the planes small again
        all three planes again
        make the axial small
        go back to the smaller layout
    """,
    "iv.remove": """
        close the scan
        remove the scans
        hide the CT images
        take away the CT
        CT off please
        switch off the scan
        clear the CT
        no more imaging
        I don't need the CT anymore
        remove the imaging from the screen
        hide all CT views
        get the scans off the monitor
        we're finished with the CT
        close the images
    """,
    "iv.reset": """
        reset the scan
        CT reset
        restore the CT
        put the CT back to default
        initialize the CT
        reset the CT views to the middle
        start over with the CT
        reset the slices
        default CT please
        reset the imaging
    """,
    "iv.window.lung": """
        lung window please
        back to the lung window
        set lung windowing
        use lung settings on the CT
        show it in lung window
        switch the CT to lung
    """,
    "iv.window.mediastinum": """
        mediastinal window please
        switch the CT to mediastinal
        show the mediastinum window
        use mediastinal settings
        mediastinum setting on the CT
        I want to see the vessels and nodes, mediastinal window
    """,
    "iv.window.soft_tissue": """
        soft tissue window please
        switch the CT to soft tissue
        show it in soft tissue window
        use soft tissue settings
        soft tissue windowing on the scan
        change to soft tissue
    """,
    "iv.window.bone": """
        bone window please
        switch the CT to bone
        show it in bone window
        use bone settings
        bone windowing on the scan
        change to bone
        I want to see the bones
    """,
    "ar.show": """
        show me the model
        the 3D model please
        bring up the 3D
        display the lung model
        show the 3D reconstruction
        open the anatomy model
        model on the screen please
        put the model up
        let me see the 3D anatomy
        can you display the model
        I'd like to see the lungs in 3D
        show the three dimensional model
        the reconstruction please
        3D anatomy please
        model please
        let's see the 3D
    """,
    "ar.show.structures": """
        show just the nodules
        only show the left lung
        show only the right upper lobe
        display the lobes only
        just show the airway
        show the right lung only
        the left upper lobe only
        only the tumor
        just the lungs please
        show the RLL and RML only
        show the lower lobes
    """,
    "ar.add": """
        add the nodules
        add the left lung
        show the airway too
        include the right lower lobe
        also the trachea
        add the middle lobe
        put the nodules back
        include the airway as well
        add the left lobes to the model
        and the bronchi too
        show the lungs as well
        add the LUL
    """,
    "ar.remove_part": """
        remove the airway
        hide the nodules
        take out the left lung
        remove the right middle lobe
        hide the trachea
        get rid of the bronchi
        drop the lower lobes
        without the airway please
        take away the nodules
        remove the left lobes from the model
        hide the RLL
    """,
    "ar.view.anterior": """
        front view
        show the front of the model
        view the model from the front
        from the front please
        anterior please
        the front side
        look at the anterior surface
    """,
    "ar.view.posterior": """
        back view
        show the back of the model
        view the model from behind
        from behind please
        posterior please
        the back side
        look at the posterior surface
    """,
    "ar.view.left": """
        left side view
        show the left side
        from the left please
        left lateral
        view the model from the left
        the left lateral aspect
    """,
    "ar.view.right": """
        right side view
        show the right side
        from the right please
        right lateral
        view the model from the right
        the right lateral aspect
    """,
    "ar.view.superior": """
        top view
        show the top of the model
        view the model from above
        from above please
        superior please
        from the top
        look at it from the apex
    """,
    "ar.view.inferior": """
        bottom view
        show the bottom of the model
        view the model from below
        from below please
        inferior please
        from the bottom
        look at it from the base
    """,
    "ar.view.surgical": """
        surgical view please
        go back to the surgical view
        the view we operate from
        reset the view to surgical
        show it from the surgeon's angle
        the operating view
        surgeon's view
    """,
    "ar.rotate.left": """
        rotate left
        turn left
        swing left
        rotate it to the left a little
        turn the 3D model left
        spin it left
    """,
    "ar.rotate.right": """
        rotate right
        turn right
        swing right
        rotate it to the right a little
        turn the 3D model right
        spin it right
    """,
    "ar.rotate.up": """
        tilt up
        turn it up
        rotate it upward a bit
        swing the model up
        tilt the model upwards
    """,
    "ar.rotate.down": """
        tilt down
        turn it down
        rotate it downward a bit
        swing the model down
        tilt the model downwards
    """,
    "ar.rotate.horizontal": """
        spin it
        rotate it all the way round
        make the model turn
        full rotation please
        spin the model horizontally
        keep it spinning
        turn it around 360 degrees
        rotate it around its vertical axis
        let it spin
    """,
    "ar.rotate.vertical": """
        flip it
        flip it vertically
        rotate it vertically
        spin it top over bottom
        turn it upside down and back
        rotate it around the horizontal axis
    """,
    "ar.rotate.static": """
        stop
        stop it
        stop the model
        hold it there
        stop moving
        stop the spin
        no rotation
        keep it still please
        halt the rotation
        make it stop turning
    """,
    "ar.zoom_in": """
        zoom in on the 3D
        zoom into the model
        closer on the model
        enlarge the model
        zoom in on the right upper lobe
        get closer to the airway
        zoom in on the lung nodule
        focus on the tumor on the model
        move in closer to the lesion
        magnify the nodule
        zoom in toward the left lung
        bring the model closer
    """,
    "ar.zoom_out": """
        zoom out on the 3D
        zoom out of the 3D model
        further away from the model
        make the model small again
        back out from the model
        less magnification on the 3D
        pull back on the model
        reduce the model zoom
        zoom the model out
    """,
    "ar.remove": """
        hide the 3D
        remove the model
        model off
        close the 3D model
        get the model off the screen
        no more model
        switch off the 3D
        clear the 3D
        erase all
        remove all of the model
        hide the anatomy model
        I'm finished with the model
        take the reconstruction away
    """,
    "ar.reset": """
        reset the 3D
        reset the model view
        model reset
        default 3D view please
        restore the model
        initialize the 3D model
        reset the anatomy
        put the 3D model back to default
        start the model over
    """,
    "any.zoom_in": """
        zoom
        in closer
        get closer
        even closer
        more magnification
        make that bigger
        could you zoom in
        closer please
        let's get a closer look
        enlarge
        blow it up
        a little closer
    """,
    "any.zoom_out": """
        zoom back out
        not so close
        further out
        pull back
        smaller
        zoom out a bit
        less magnification
        go wider
        out a little
        make that smaller
        back off
    """,
    "any.reset": """
        reset it
        back to how it was
        restore the default
        back to square one
        start again
        restore default settings
        reset to default
        default please
        put everything back
    """,
    "any.remove": """
        hide
        hide that
        remove it
        clear it
        close that
        take that off
        get that off the screen
        we don't need it anymore
        dismiss it
        remove that please
        away with it
    """,
    "oos.instruments": """
        I need the stapler
        reload the stapler with a green cartridge
        can I get a peanut
        the harmonic please
        where's the suction
        bring the endo bag
        I need the clip applier
        have we got another sponge
        energy device please
        swap the grasper
        a vessel loop please
        hand me the Maryland
        I need a new needle driver
    """,
    "oos.surgical_action": """
        staple the left lower lobe bronchus
        divide the right upper lobe vein
        clip the lingular artery
        fire across the middle lobe
        cut the bronchus now
        transect the airway here
        dissect the nodule out
        grab the lower lobe and lift it
        resect the right upper lobe
        wedge out the nodule
        staple across the fissure
        cut that adhesion
        divide the vein
        let me retract the lung
        clip the artery
        go ahead and fire
        dissect the lymph nodes
        coagulate that bleeder
        grab the lobe
        pull the lobe up
        tie that off
        remove the specimen
        take the lower lobe down
        lift up the middle lobe
        push the diaphragm down
        irrigate the chest
        close the ports
    """,
    "oos.robot_camera": """
        move the camera to the right
        zoom the camera in
        rotate the scope
        turn the camera around
        camera up please
        pan the camera left
        the camera needs cleaning
        swap arm one and arm two
        move the robot arm up
        dock the robot
        record this part
        take a picture
        switch the scope to 0 degrees
    """,
    "oos.patient_status": """
        is she okay
        how is the patient doing
        what are the vitals
        the patient is moving
        is he breathing well
        how's the oxygenation
        the lung won't deflate
        the patient is bleeding
        what's her pulse
        is the patient awake
        the saturation is low
        there's an air leak
        we're losing pressure
        the lung is inflating
        is the lung down yet
    """,
    "oos.unheld_data": """
        what is his creatinine
        show the blood results
        what's her INR
        any allergies
        does he take blood thinners
        show the pathology report
        what's the patient's address
        what's the insurance
        show the PET CT
        show me the MRI
        show the heart in 3D
        add the aorta to the model
        show the pulmonary veins
        display the ribs on the model
        what did the biopsy show
        what's the patient's ID
        how much does she smoke
        show the lymph nodes on the model
    """,
    "oos.staff": """
        call the attending
        get the fellow in here
        tell the nurse we need help
        page the resident
        can someone call the blood bank
        ask radiology to come
        phone the ward
        let the family know
        tell the anaesthetist to wake her up
        get pathology on the line
    """,
    "oos.room": """
        lights off
        lights on please
        turn the lights up
        tilt the table
        put the patient in reverse trendelenburg
        raise the bed
        open the window
        turn on the fan
        music please
        mute the music
        skip this song
    """,
    "oos.chatter": """
        okay
        good
        great thanks
        thanks everyone
        well done team
        good afternoon
        how's everyone doing
        let's get going
        hold on a moment
        one second
        ready when you are
        what's for lunch
        I need a coffee
        did everyone have a good weekend
        we're almost done
        let's wrap up
        any questions
        let's start
        sorry about that
        that was close
        looks fine to me
        I agree
        yes
        no
        not now
        let me see
    """,
    "oos.remarks": """
        the lobe looks inflamed
        there's a lot of fat around the hilum
        the nodule is right where the CT said
        the lung looks emphysematous
        the fissure is well developed
        the tumour is bigger than I thought
        the scan shows a calcified node
        the 3D model was really helpful
        this model is very accurate
        the airway anatomy is variant
        the vessels look different from the CT
        the right upper lobe is stuck
        I think we're in the right place
        that lesion looks benign
        the CT is a bit old
        the middle lobe looks fine
        the bronchus is very short here
        the lower lobe is adherent to the diaphragm
        we've got good exposure now
        the left lung is deflated
    """,
}


# Colloquial and British phrasings (pop, stick, bung, chuck, ditch, bin…): the team's test
# wording is more colloquial than its development wording, so every intent gets some.
_COLLOQUIAL: dict[str, str] = {
    "ir.show.all": """
        show every field
        all the fields please
        all patient fields
        display all fields of the patient
        pop the patient details up
        stick the patient info on
        bung the clinical summary up on the screen
        let's have the patient's bits and pieces up
        chuck the patient sheet up for me
        can we get the patient's notes up
    """,
    "ir.show.age_sex": """
        how old's the lady
        what age is the gentleman
        pop her age up
        is it a chap or a lady
    """,
    "ir.show.diagnosis": """
        what's he got
        what's she in for
        remind me what we're dealing with here
        what's the problem we're sorting out today
    """,
    "ir.show.comorbidities": """
        has she got anything else going on
        is he otherwise well
        what else has she got wrong with her
        any other bits of history
    """,
    "ir.show.operation_name": """
        what are we up to today
        what's on the cards for this one
        what op is she down for
    """,
    "ir.show.operation_date": """
        when's he down for surgery
        what date is she booked in for
    """,
    "ir.show.tumor_location": """
        where's the lump
        which bit of lung is it in
        whereabouts is the tumour
    """,
    "ir.show.height": """
        how tall's the chap
        pop his height up
    """,
    "ir.show.weight": """
        what's she weigh
        stick his weight on the screen
    """,
    "ir.show.bmi": """
        what's his BMI like
        pop the BMI up
    """,
    "ir.show.physical": """
        pop his height, weight and BMI up
        how big a chap is he
        stick the body measurements on
    """,
    "ir.show.pft": """
        how are her lungs on the tests
        stick the lung function up
        what were his breathing numbers like
        pop the spirometry up
    """,
    "ir.hide": """
        ditch the patient info
        bin the patient box
        lose the patient details
        that's enough of the patient stuff
        scrap the info panel
        knock the patient info off
    """,
    "ir.remove_field": """
        ditch the BMI
        lose the height from the box
    """,
    "ir.reset": """
        patient info back to square one
        put the patient box back how it was
    """,
    "iv.show": """
        pop the CT up
        stick the scan on
        bung the images up
        let's have the CT on
        can we get the scan up
        fire up the CT
        chuck the scans on the screen
    """,
    "iv.move.up": """
        shift it up slightly
        take it up a notch
        knock it up a bit
        edge upwards
        a tiny bit higher
        step it up one
        creep up a little
        nudge it up
        bump it up a bit
        shuffle up a couple
        inch upwards
    """,
    "iv.move.down": """
        shift it down slightly
        take it down a notch
        drop it down a bit
        edge downwards
        a tiny bit lower
        step it down one
        creep down a little
        nudge it down
        bump it down a bit
        shuffle down a couple
        inch downwards
    """,
    "iv.move.left": """
        shift it left slightly
        edge to the left
        a tiny bit more left
        nudge it left
        shuffle left a bit
        inch to the left
    """,
    "iv.move.right": """
        shift it right slightly
        edge to the right
        a tiny bit more right
        nudge it right
        shuffle right a bit
        inch to the right
    """,
    "iv.move.forward": """
        shift it forward slightly
        edge forwards
        nudge it forward
        shuffle forwards a bit
        inch anteriorly
    """,
    "iv.move.back": """
        shift it back slightly
        edge backwards
        nudge it back
        shuffle backwards a bit
        inch posteriorly
    """,
    "iv.pos.middle": """
        axial middle
        sagittal centre
        coronal to the centre
        bang in the middle
        slap bang in the centre of the stack
    """,
    "iv.pos.max": """
        axial max
        coronal maximum
        sagittal to the max
        max on the coronal
        right to the very end
        all the way to the last one
    """,
    "iv.pos.min": """
        sagittal min
        axial minimum
        coronal to the min
        min on the axial
        right back to the first one
        all the way back to the start
    """,
    "iv.zoom_in": """
        pop the axial up big
        stick the sagittal on full screen
        let's have the coronal nice and large
        blow the axial up for me
        bigger on the CT please
    """,
    "iv.zoom_out": """
        back to the little CT pictures
        pop the CT back to small
        shrink the scan back down
        all three little views please
    """,
    "iv.remove": """
        ditch the CT
        bin the scan
        lose the images
        kill the CT
        scrap the scans
        knock the CT off the screen
    """,
    "iv.reset": """
        CT back to square one
        put the scan back to how it started
    """,
    "iv.window.lung": """
        stick it on lung window
        lung settings on the scan please
    """,
    "iv.window.mediastinum": """
        stick it on mediastinal
        mediastinal settings on the scan please
    """,
    "iv.window.soft_tissue": """
        stick it on soft tissue
    """,
    "iv.window.bone": """
        stick it on bone
    """,
    "ar.show": """
        pop the model up
        stick the 3D on
        bung the lung model up
        fire up the reconstruction
        get the 3D lungs on screen
        let's have the model on
        chuck the 3D anatomy up
    """,
    "ar.show.structures": """
        show the right upper lobe
        display the left lower lobe
        the left upper lobe please
        just leave the nodules on
        only keep the left lung up
        nothing but the airway
    """,
    "ar.add": """
        where are the nodules on the model
        can you point out the tumour on the 3D
        is the airway shown on the model
        where's the lesion on the reconstruction
        stick the nodules back on
        pop the left lung back in
        chuck the airway in as well
    """,
    "ar.remove_part": """
        ditch the airway
        lose the left lung
        bin the nodules
        knock the lower lobes off
    """,
    "ar.view.anterior": """
        let's see it face on
        swing round to the front view
    """,
    "ar.view.posterior": """
        round the back of it
        let's see it from round the back
    """,
    "ar.view.left": """
        from the left hand side
    """,
    "ar.view.right": """
        from the right hand side
    """,
    "ar.view.superior": """
        from up top
        looking down from the top
    """,
    "ar.view.inferior": """
        from down below
        looking up from underneath
    """,
    "ar.view.surgical": """
        home view please
        back to our usual view
    """,
    "ar.rotate.left": """
        twist it left
        swivel it round to the left
    """,
    "ar.rotate.right": """
        twist it right
        swivel it round to the right
    """,
    "ar.rotate.up": """
        tip it towards the ceiling
        tilt it away from me
    """,
    "ar.rotate.down": """
        tip it towards the floor
        tilt it towards me
    """,
    "ar.rotate.horizontal": """
        give it a whirl
        give it a spin round
        set it going round
    """,
    "ar.rotate.vertical": """
        flip it end over end
        tumble it over
    """,
    "ar.rotate.static": """
        whoa, stop there
        hold it right there
        stop it moving
    """,
    "ar.zoom_in": """
        get right in on the nodule
        push in on the model
        in tight on the airway
    """,
    "ar.zoom_out": """
        come back out on the model
        ease back on the 3D
    """,
    "ar.remove": """
        ditch the model
        bin the 3D
        lose the reconstruction
        kill the 3D model
        scrap the model
    """,
    "ar.reset": """
        model back to square one
        put the 3D back how it was at the start
    """,
    "any.zoom_in": """
        push in a bit
        in a bit more
        go in tighter
    """,
    "any.zoom_out": """
        ease back a bit
        come out a touch
        out a bit more
    """,
    "any.reset": """
        back to square one
        from the top again
    """,
    "any.remove": """
        ditch it
        bin that
        lose it
        kill it
    """,
    "oos.chatter": """
        cheers
        lovely
        brilliant, thanks
        hang on a sec
        bear with me
        right then
        okey dokey
        ta very much
        fair enough
        blimey
    """,
    "oos.remarks": """
        that's a right mess in there
        the lobe's a bit stuck down
        the nodule's bang where the scan said
        bit of a tricky one this
    """,
}


def _with_more(intents: list[Intent]) -> tuple[Intent, ...]:
    out = []
    for i in intents:
        more = tuple(p.strip() for p in (_MORE.get(i.key, "") + "\n"
                                         + _COLLOQUIAL.get(i.key, "")).splitlines()
                     if p.strip())
        out.append(Intent(i.key, i.agent, i.kind, i.defaults, i.needs_words,
                          tuple(dict.fromkeys(i.phrases + more)), i.family))
    unknown = (set(_MORE) | set(_COLLOQUIAL)) - {i.key for i in intents}
    if unknown:
        raise ValueError(f"exemplars for unknown intents: {sorted(unknown)}")
    return tuple(out)


# Remarks about the case that name what the console shows (fields, the CT, the model) without
# asking for anything: the hardest negatives, since their nouns are ours.
_OOS_CASE = [
    _intent("oos.case_remarks", "OOS", "oos", """
        her BMI is quite high for this
        his lung function was borderline
        the PFTs were fine last year
        she's young for this diagnosis
        he's older than he looks
        the diagnosis was only made last month
        I would have done a wedge resection instead
        we should have booked a longer slot
        the operation went well last time
        the procedure is taking longer than planned
        her comorbidities make this risky
        his weight has gone down a lot
        she's quite tall, the ports need to go higher
        the tumour location makes this tricky
        the CT was reported as normal last year
        the scan quality is not great
        the radiologist missed this nodule at first
        the slices on this CT are quite thick
        these 3D models are amazing
        I wish we had these models years ago
        the reconstruction took ages to make
        the model is a bit off near the hilum
        the left lung on the model looks smaller than in real life
        the view from behind is always confusing
        I like the surgical view best
        rotating models make me dizzy
        zooming in too much makes it blurry
        the axial images are easier to read
        coronal is my favourite plane
        this window setting was used for the report
        the patient information was wrong last time
        the data on the sheet looks old
        we operated on her sister last year
        his diabetes is well controlled
        the spirometry was done in March
        she's had chemotherapy before
        the nodule grew since the last scan
        nice, that went smoothly
        the upper lobe came out in one piece
        left is always harder than right for me
    """),
]

INTENTS: tuple[Intent, ...] = _with_more([*_IR, *_IV, *_AR, *_ANY, *_OOS, *_OOS_CASE])
INTENTS_BY_KEY: dict[str, Intent] = {i.key: i for i in INTENTS}

# Which intents reach each registry action: the coverage tests read this.
ACTION_INTENTS: dict[str, tuple[str, ...]] = {
    "IR.SHOW": ("ir.show.all", "ir.show.pft", "ir.remove_field"),
    "IR.HIDE": ("ir.hide",),
    "IR.RESET": ("ir.reset",),
    "IV.SHOW_MOVE": ("iv.show", "iv.move.up", "iv.move.absolute", "iv.window.bone"),
    "IV.ZOOM_IN_MOVE": ("iv.zoom_in",),
    "IV.ZOOM_OUT": ("iv.zoom_out",),
    "IV.REMOVE": ("iv.remove",),
    "IV.RESET": ("iv.reset",),
    "AR.SHOW": ("ar.show", "ar.add", "ar.view.posterior", "ar.remove_part"),
    "AR.ROTATE": ("ar.rotate.left", "ar.rotate.static"),
    "AR.ZOOM_IN": ("ar.zoom_in",),
    "AR.ZOOM_OUT": ("ar.zoom_out",),
    "AR.REMOVE": ("ar.remove",),
    "AR.RESET": ("ar.reset",),
}


def all_phrases() -> list[tuple[str, str]]:
    """(intent key, phrase) for every exemplar, in a stable order."""
    return [(i.key, p) for i in INTENTS for p in i.phrases]


def exemplar_hash() -> str:
    """Identifies the exemplar set (the on-disk embedding cache is keyed by it)."""
    h = hashlib.sha256()
    for key, phrase in all_phrases():
        h.update(f"{key}\t{phrase}\n".encode())
    return h.hexdigest()[:16]


def family_values(intents: tuple[Intent, ...] | list[Intent], family: str, name: str
                  ) -> frozenset[Any]:
    """Every value of parameter ``name`` that the intents of a family imply."""
    return frozenset(i.param(name) for i in intents if i.family == family
                     and i.param(name) is not None)


__all__ = ["ACTION_INTENTS", "INTENTS", "INTENTS_BY_KEY", "Intent", "all_phrases",
           "exemplar_hash", "family_of", "family_values"]
