"""The words of generated friendly names (lobby/rules/friendly_names.py): kind adjectives and animals a class may put on
a projector, in English, German and Spanish. Made by the project; tests/lobby/test_friendly_names.py checks that
every word and every name passes the word filter (core/wordfilter.py), that no name is longer than a nickname may
be with a number after it, and that each language has at least 40 of each.

German adjectives are kept as stems and take the strong ending of their animal's gender ("Mutiger Otter",
"Mutige Eule", "Mutiges Pferd"); Spanish names are the animal first and the adjective after it, agreeing with the
animal's gender ("Nutria valiente", "Zorro rápido", "Cebra rápida")."""

ENGLISH_ADJECTIVES = (
    "Brave", "Bright", "Bold", "Busy", "Calm", "Cheerful", "Clever", "Curious", "Daring", "Eager", "Friendly",
    "Gentle", "Happy", "Helpful", "Honest", "Jolly", "Joyful", "Keen", "Kind", "Lively", "Loyal", "Lucky", "Merry",
    "Mighty", "Nimble", "Noble", "Patient", "Plucky", "Polite", "Proud", "Quick", "Quiet", "Sleepy", "Smart",
    "Speedy", "Steady", "Sunny", "Swift", "Tidy", "Wise", "Witty", "Cosy",
)  # fmt: skip
ENGLISH_ANIMALS = (
    "Otter", "Fox", "Badger", "Bear", "Rabbit", "Hare", "Owl", "Eagle", "Falcon", "Panda", "Koala", "Tiger",
    "Lion", "Zebra", "Giraffe", "Hippo", "Rhino", "Camel", "Llama", "Penguin", "Dolphin", "Whale", "Seal",
    "Turtle", "Lizard", "Gecko", "Frog", "Hedgehog", "Squirrel", "Mouse", "Hamster", "Deer", "Moose", "Wolf",
    "Lynx", "Puffin", "Parrot", "Robin", "Swan", "Heron", "Crane", "Bee", "Duck", "Pony",
)  # fmt: skip

# Stems: + "er" (masculine), "e" (feminine), "es" (neuter), without an article ("Mutiger Otter").
GERMAN_ADJECTIVES = (
    "mutig", "klug", "froh", "flink", "schlau", "ruhig", "heiter", "munter", "tapfer", "fleißig", "wach", "stark",
    "sanft", "kühn", "treu", "lustig", "witzig", "lieb", "schnell", "emsig", "eifrig", "sonnig", "gütig", "weis",
    "höflich", "pfiffig", "putzig", "quirlig", "wacker", "brav", "bunt", "leis", "still", "zart", "fein", "keck",
    "wild", "frei", "agil", "tüchtig", "listig", "flott", "rasch",
)  # fmt: skip
GERMAN_ENDINGS = {"m": "er", "f": "e", "n": "es"}
GERMAN_ANIMALS = (
    ("Otter", "m"), ("Fuchs", "m"), ("Dachs", "m"), ("Bär", "m"), ("Hase", "m"), ("Adler", "m"), ("Falke", "m"),
    ("Panda", "m"), ("Koala", "m"), ("Tiger", "m"), ("Löwe", "m"), ("Wal", "m"), ("Igel", "m"), ("Hamster", "m"),
    ("Hirsch", "m"), ("Elch", "m"), ("Wolf", "m"), ("Luchs", "m"), ("Pinguin", "m"), ("Delfin", "m"),
    ("Frosch", "m"), ("Schwan", "m"), ("Reiher", "m"), ("Kranich", "m"), ("Biber", "m"), ("Specht", "m"),
    ("Spatz", "m"), ("Fink", "m"), ("Eule", "f"), ("Maus", "f"), ("Gans", "f"), ("Ente", "f"), ("Biene", "f"),
    ("Hummel", "f"), ("Möwe", "f"), ("Taube", "f"), ("Katze", "f"), ("Robbe", "f"), ("Ziege", "f"), ("Giraffe", "f"),
    ("Pferd", "n"), ("Schaf", "n"), ("Reh", "n"), ("Lama", "n"), ("Zebra", "n"), ("Kamel", "n"), ("Pony", "n"),
)  # fmt: skip

# (masculine, feminine): one word where both are the same.
SPANISH_ADJECTIVES = (
    ("valiente", "valiente"), ("listo", "lista"), ("alegre", "alegre"), ("rápido", "rápida"),
    ("calmo", "calma"), ("curioso", "curiosa"), ("amable", "amable"), ("atento", "atenta"),
    ("audaz", "audaz"), ("feliz", "feliz"), ("sabio", "sabia"), ("fuerte", "fuerte"), ("ágil", "ágil"),
    ("veloz", "veloz"), ("noble", "noble"), ("leal", "leal"), ("tenaz", "tenaz"), ("sereno", "serena"),
    ("astuto", "astuta"), ("genial", "genial"), ("gentil", "gentil"), ("risueño", "risueña"), ("cortés", "cortés"),
    ("honesto", "honesta"), ("animado", "animada"), ("contento", "contenta"), ("educado", "educada"),
    ("fiel", "fiel"), ("firme", "firme"), ("jovial", "jovial"), ("dulce", "dulce"), ("tierno", "tierna"),
    ("hábil", "hábil"), ("vivaz", "vivaz"), ("sensato", "sensata"), ("prudente", "prudente"),
    ("gracioso", "graciosa"), ("bueno", "buena"), ("sincero", "sincera"), ("activo", "activa"),
    ("capaz", "capaz"), ("cordial", "cordial"),
)  # fmt: skip
SPANISH_ANIMALS = (
    ("nutria", "f"), ("zorro", "m"), ("tejón", "m"), ("castor", "m"), ("oso", "m"), ("conejo", "m"),
    ("liebre", "f"), ("búho", "m"), ("águila", "f"), ("halcón", "m"), ("panda", "m"), ("koala", "m"),
    ("tigre", "m"), ("león", "m"), ("cebra", "f"), ("jirafa", "f"), ("camello", "m"), ("llama", "f"),
    ("pingüino", "m"), ("delfín", "m"), ("ballena", "f"), ("foca", "f"), ("tortuga", "f"), ("lagarto", "m"),
    ("rana", "f"), ("erizo", "m"), ("ardilla", "f"), ("ratón", "m"), ("hámster", "m"), ("ciervo", "m"),
    ("lobo", "m"), ("lince", "m"), ("loro", "m"), ("cisne", "m"), ("garza", "f"), ("grulla", "f"),
    ("abeja", "f"), ("gacela", "f"), ("gato", "m"), ("oveja", "f"), ("cabra", "f"), ("pato", "m"),
    ("puma", "m"), ("alce", "m"), ("colibrí", "m"),
)  # fmt: skip
