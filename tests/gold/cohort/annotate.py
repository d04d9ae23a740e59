#!/usr/bin/env python3
"""Expands the hand annotations below into gold items (one JSON object per data item).

Every interpretive decision (which columns are arms, what each row's characteristic path and
category are, which statistical measure each number in a cell is) is written by hand below,
row by row, from the publisher's XML of each paper (../shared/data/rct_baseline/jats, whose
table cells are in table1_cells_from_jats.json). The script only reads the numbers of each
annotated cell in order and checks that their count equals the annotated measures, so a
mis-annotated row fails loudly instead of producing a wrong item.

    python3 tests/gold/cohort/annotate.py ../shared/data/rct_baseline/table1_cells_from_jats.json
"""
import json
import re
import sys

MEASURES = {
    'msd': 'mean sd', 'mse': 'mean se', 'm': 'mean', 'cp': 'count percent', 'c': 'count',
    'p': 'percent', 'iqr': 'median iqr_low iqr_high', 'mci': 'mean ci_low ci_high',
}
NUM = re.compile(r'(?:(?<=^)|(?<=[\s(\[,;]))[-\u2013\u2212](?=\d)|\d+(?:\.\d+)?')


def numbers(text):
    """The numbers of a cell in order; a dash is a sign only before a digit at a word start."""
    out, sign = [], 1
    for m in NUM.finditer(text):
        if m.group()[0] in '-\u2013\u2212':
            sign = -1
            continue
        out.append(sign * float(m.group()))
        sign = 1
    return out


def grid(rows):
    g = {}
    for r, row in enumerate(rows):
        c = 0
        for cell in row:
            while (r, c) in g:
                c += 1
            for dr in range(cell['rowspan']):
                for dc in range(cell['colspan']):
                    g[(r + dr, c + dc)] = cell['text'] if (dr, dc) == (0, 0) else None
            c += cell['colspan']
    return g


def strip_annotation(label):
    """A category's name: the row label without its measure annotation (', n (%)', ' (%)')."""
    label = re.sub(r',?\s*(n \(%\)|\(%\)|%)\s*$', '', label).strip()
    return label


ANN = {}


def table(pmcid, label, arms, arm_n, rows, transposed=False, stub=None):
    ANN[(pmcid, label)] = dict(arms=arms, arm_n=arm_n, rows=rows, transposed=transposed, stub=stub)


def rows_under(parent, rng, col, meas, cat=True):
    """Rows `rng` whose label (in grid column `col`) is a category (or sub-row) under `parent`."""
    return [(r, list(parent), ('LABEL' if cat else None), meas, col) for r in rng]


# ---------------------------------------------------------------------------------------------
# PMC3321528 Table 1: caption "mean ± SD; in medication variables: median (25th–75th percentiles)"
table('PMC3321528', 'Table 1', {1: 'EMS group', 2: 'Control group'}, {},
      [(1, [], None, 'population_size', None),
       (2, ['Age, years'], None, 'msd', None),
       (3, ['Gender, male/female'], ['male', 'female'], 'count count', None),
       (4, ['SOFA score on admission'], None, 'msd', None),
       (5, ['APACHE II score on admission'], None, 'msd', None),
       (6, ['SAPS III score on admission'], None, 'msd', None)]
      + rows_under(['Diagnostic category at admission'], range(8, 14), 0, 'cp')
      + rows_under(['Comorbidities'], range(15, 24), 0, 'cp')
      + [(24, ['Sepsis during ICU stay, n (%)'], 'LABEL', 'cp', None)]
      + rows_under(['Medication'], range(26, 30), 0, 'iqr', cat=False))

# PMC3546023 Tables 2 and 5: "±" with no measure named anywhere: mean ± SD; units in column 1.
t2 = [(r, None, None, 'msd', 0) for r in range(1, 22)]
table('PMC3546023', 'Table 2', {2: 'Nonsmokers', 3: 'S1', 4: 'S2', 5: 'S3'},
      {2: 56, 3: 7, 4: 34, 5: 15}, t2)
t5 = [(r, None, None, 'msd', 0) for r in list(range(1, 11)) + list(range(12, 23))]
table('PMC3546023', 'Table 5', {2: 'Nonsmokers', 3: 'Smokers'}, {2: 56, 3: 58}, t5)

# PMC3654355 Table 1: measures in column sub-headers (N, %) and in the caption (mean (SD)).
table('PMC3654355', 'Table 1', {(1, 2): 'ILI', (3, 4): 'Control'}, {(1, 2): 71, (3, 4): 33},
      [(2, ['Female/male'], ['Female', 'male', 'Female', 'male'], 'count count percent percent', None)]
      + [(r, None, None, 'msd', 0) for r in range(3, 11)]
      + rows_under(['Highest education'], range(12, 15), 0, 'cp')
      + [(15, ['Employment (full-time job)'], 'LABEL', 'cp', None),
         (16, ['Current smoker (yes)'], 'LABEL', 'cp', None)])
table('PMC3654355', 'Table 7', {1: 'ILI', 2: 'Control'}, {},
      [(r, None, None, 'msd', 0) for r in range(1, 4)])

# PMC3751573 Table 1: "n (%)" as a column sub-header; Table 2: time points over arms.
table('PMC3751573', 'Table 1', {1: 'EP group', 2: 'CACP group', 3: 'Total'}, {},
      rows_under(['Levels of training hospitals'], range(3, 5), 0, 'cp')
      + rows_under(['Training setting'], range(6, 9), 0, 'cp')
      + rows_under(['Number of graduating students'], range(10, 12), 0, 'cp')
      + rows_under(['Education level of mentors'], range(13, 15), 0, 'cp')
      + rows_under(['Marital status of mentors'], range(16, 18), 0, 'cp')
      + [(18, ['Age (yr) of mentors (means±SD)'], None, 'msd', None)]
      + rows_under(['Length of nursing working (yr)'], range(20, 22), 0, 'msd', cat=False))
table('PMC3751573', 'Table 2',
      {2: 'T0 / EP group', 3: 'T0 / CACP group', 5: 'T1 / EP group', 6: 'T1 / CACP group'},
      {2: 19, 3: 24, 5: 19, 6: 23}, [(r, None, None, 'msd', 0) for r in range(2, 9)],
      stub=1)  # column 1 is the scale's possible score range, not a row header

# PMC4319071 Table 1: three levels of row headers in three grid columns.
bg = 'Background characteristics'
di = 'Dietary intake'
rows = [(3, [bg, 'Age (years), mean (SD)'], None, 'msd', None)]
rows += rows_under([bg, 'Gender, n (%)'], (5, 6), 2, 'cp')
rows += rows_under([bg, 'Ethnicity (n=1348), n (%)'], (8, 9), 2, 'cp')
rows += rows_under([bg, 'Educational level, n (%)'], (11, 12), 2, 'cp')
rows += rows_under([bg, 'Place of residence (ie, cities in the Netherlands), n (%)'], range(14, 19), 2, 'cp')
for r, name in ((21, 'Vegetable intake (grams)'), (24, 'Fruit intake (pieces)'),
                (27, 'High-energy snack intake (pieces)'),
                (30, 'Saturated fat intake (fat points) (n=1348)')):
    rows.append((r, [di, name], None, 'msd', None))        # the "Mean (SD)" row: a measure row
    rows.append((r + 1, [di, name], 'LABEL', 'cp', 2))    # "Not complying, n (%)"
table('PMC4319071', 'Table 1', {3: 'Total', 4: 'Control', 5: 'Basic', 6: 'Plus'},
      {3: 1349, 4: 434, 5: 459, 6: 456}, rows)

# PMC4319071 Tables 2 and 4: transposed (arms in rows under time points, characteristics in
# columns with the measure in a column sub-header). Rows: (row, arm); columns: (col, path, measures).
for label in ('Table 2', 'Table 4'):
    arms_by_row = {}
    for base, tp in ((3, 'Baseline'), (7, '1-month follow-up'), (11, '4-month follow-up')):
        for k, arm in enumerate(('Control', 'Basic', 'Plus')):
            arms_by_row[base + k] = tp + ' / ' + arm
    table('PMC4319071', label, arms_by_row, {}, None, transposed=True)

# PMC4486927 Table 1: "Values are numbers (percentages) unless otherwise indicated" (footnote).
rows = [(1, ['Mean age (SD), y'], None, 'msd', None),
        (2, ['Age >50 y'], 'LABEL', 'cp', None),
        (3, ['Male sex'], 'LABEL', 'cp', None),
        (4, ['Mean weight (SD), kg'], None, 'msd', None),
        (5, ['Mean BMI (SD), kg/m2'], None, 'msd', None)]
rows += rows_under(['BMI (SD), kg/m2'], range(7, 10), 0, 'cp')
rows += [(r, None, None, 'msd', 0) for r in range(10, 19)]
rows += rows_under(['APRI score'], range(20, 23), 0, 'cp')
rows += [(23, ['Mean HCV RNA level (SD), log10 IU/mL'], None, 'msd', None)]
rows += rows_under(['HCV RNA level, IU/mL'], (25, 26), 0, 'cp')
rows += rows_under(['Subgenotype'], range(28, 31), 0, 'cp')
rows += rows_under(['IL-28B rs8099917 genotype†'], (32, 33), 0, 'cp')
table('PMC4486927', 'Table 1', {1: 'SD48W', 2: 'SD24W'}, {1: 94, 2: 93}, rows)

# PMC4574984 Table 1: N in a second header row; "(IQR)" cells written "2 (2; 4)".
rows = [(1, [], None, 'population_size', None),
        (2, ['Mean Age (SD)'], None, 'msd', None),
        (3, ['Male (%)'], 'LABEL', 'cp', None),
        (4, ['BMI, mean (SD)'], None, 'msd', None)]
rows += rows_under(['Tumor site'], (6, 7), 0, 'cp')
rows += [(8, ['Recurrence of cancer'], 'LABEL', 'cp', None)]
rows += rows_under(['Severity of surgery $'], range(10, 13), 0, 'cp')
rows += [(r, None, 'LABEL', 'cp', 0) for r in range(13, 17)]
rows += rows_under(['Performance State ECOG'], range(18, 21), 0, 'cp')
rows += [(21, ['Comorbidities § , Median (IQR)'], None, 'iqr', None)]
rows += rows_under(['Nutrition state (n = 629) &'], range(23, 26), 0, 'cp')
rows += rows_under(['Mean hand grip strength [kg] (SD)'], (27, 28), 0, 'msd', cat=False)
rows += [(29, ['Living alone at home'], 'LABEL', 'cp', None),
         (30, ['Living at home with public help'], 'LABEL', 'cp', None)]
rows += rows_under(['School degree (%; n = 589)'], (32,), 0, 'cp')
rows += [(33, ['Surgery: median length [minutes](IQR)'], None, 'iqr', None),
         (34, ['Anesthesia: median length [minutes](IQR)'], None, 'iqr', None)]
table('PMC4574984', 'Table 1', {1: 'Intervention', 2: 'No Intervention'}, {}, rows)

# PMC5086025 Table 2: one arm (n=40 in the caption); "National data" is a reference
# population, not a study arm, so it has no gold items.
rows = [(1, ['Age, years, mean'], None, 'm', None),
        (2, ['IES-1a summed total score [17], mean'], None, 'm', None)]
rows += rows_under(['Ethnicity [54], %b'], range(4, 8), 1, 'p')
rows += rows_under(['Highest level of education attained [54], %b'], range(9, 12), 1, 'p')
rows += rows_under(['Employment [55], %b'], range(13, 18), 1, 'p')
rows += rows_under(['Socioeconomic status (NZSEI-06)c [56], %b'], range(19, 23), 1, 'p')
rows += [(23, ['BMId (kg/m2) [57], mean'], None, 'm', None),
         (24, ['IES-2e total, mean'], None, 'm', None)]
rows += rows_under(['IES-2e total, mean'], range(25, 29), 1, 'm', cat=False)
rows += [(29, ['AAQ-IIj, mean'], None, 'm', None), (30, ['PCSk, mean'], None, 'm', None),
         (31, ['MCSl, mean'], None, 'm', None)]
rows += rows_under(['Binge eating, %m'], (33, 34), 1, 'p')
rows += rows_under(['Dieting history, %n'], range(36, 39), 1, 'p')
table('PMC5086025', 'Table 2', {2: 'All participants'}, {2: 40}, rows)


def expand(data):
    items = []
    for (pmcid, label), a in ANN.items():
        t = next(t for t in data[pmcid]['tables'] if t['label'] == label)
        g = grid(t['rows'])
        ncols = max(c for _, c in g) + 1

        def emit(arm, path, cats, meas, text):
            meas = MEASURES.get(meas, meas).split()
            vals = numbers(text)
            if len(vals) != len(meas):
                sys.exit(f'{pmcid} {label} {arm} {path}: {text!r} has {vals}, annotated {meas}')
            for k, (v, m) in enumerate(zip(vals, meas)):
                cat = cats[k] if isinstance(cats, list) else cats
                items.append({'pmcid': pmcid, 'table': label, 'arm': arm, 'characteristic': path,
                              'category': cat, 'measure': m, 'value': v})

        if a['transposed']:
            h0 = {c: g.get((0, c)) for c in range(ncols)}
            for r, arm in a['arms'].items():
                for c in range(2, ncols, 2):
                    name = h0[c]
                    emit(arm, [name], None, 'mse', g[(r, c)])
                    if g[(r, c + 1)] != 'NA':
                        emit(arm, [name, g[(1, c + 1)]], None, 'mci', g[(r, c + 1)])
            continue
        for col, n in a['arm_n'].items():
            items.append({'pmcid': pmcid, 'table': label, 'arm': a['arms'][col], 'characteristic': [],
                          'category': None, 'measure': 'population_size', 'value': float(n)})
        first_arm = a['stub'] or min(k if isinstance(k, int) else k[0] for k in a['arms'])
        for (r, path, cat, meas, lcol) in a['rows']:
            if path is None:      # the row's own header cells; a blank or spanned first one inherits
                first = next(g.get((k, 0)) for k in range(r, -1, -1) if g.get((k, 0)))
                path = [first] + [g.get((r, c)) for c in range(1, first_arm) if g.get((r, c))]
            elif lcol is not None:
                path = path + [g.get((r, lcol))]
            if cat == 'LABEL':
                cat = strip_annotation(path[-1])
            for arm_key, arm in a['arms'].items():
                cols = arm_key if isinstance(arm_key, tuple) else (arm_key,)
                text = ' '.join(g.get((r, c)) or '' for c in cols)
                emit(arm, path, cat, meas, text)
    return items


def check_labels(data, items):
    for it in items:
        t = next(t for t in data[it['pmcid']]['tables'] if t['label'] == it['table'])
        texts = {c['text'] for row in t['rows'] for c in row}
        for p in it['characteristic']:
            assert p in texts, (it, p)


if __name__ == '__main__':
    data = json.load(open(sys.argv[1]))
    items = expand(data)
    check_labels(data, items)
    for pmcid in sorted({i['pmcid'] for i in items}):
        with open(f'{sys.argv[2] if len(sys.argv) > 2 else "."}/{pmcid}.jsonl', 'w') as f:
            for it in items:
                if it['pmcid'] == pmcid:
                    v = it['value']
                    it['value'] = int(v) if v == int(v) and 'e' not in repr(v) else v
                    f.write(json.dumps(it, ensure_ascii=False) + '\n')
    print(len(items), 'items')
