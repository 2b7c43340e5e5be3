//! The words pages label things with, in English and the languages the network's country subdomains serve
//! (`de.`, `fr.`, `es.`, `br.`, `jp.`), and the counts written beside them.

use crate::numbers::{Count, read_count};

/// The About rows the parser reads, each by the key [`about_key`] gives it and every label it is printed with
/// (lower case). A label not listed here keeps its own text as its key, so an unknown row is simply not read.
const ABOUT_LABELS: [(&str, &[&str]); 7] = [
    (
        "website",
        &["website", "site web", "sitio web", "site", "ウェブサイト"],
    ),
    (
        "industry",
        &[
            "industry",
            "industries",
            "branche",
            "secteur",
            "sector",
            "setor",
            "業界",
            "業種",
        ],
    ),
    (
        "company size",
        &[
            "company size",
            "unternehmensgröße",
            "größe",
            "taille de l'entreprise",
            "tamaño de la empresa",
            "tamanho da empresa",
            "会社規模",
        ],
    ),
    (
        "headquarters",
        &["headquarters", "hauptsitz", "siège social", "sede", "本社"],
    ),
    (
        "type",
        &[
            "type",
            "art",
            "unternehmensart",
            "tipo",
            "種類",
            "組織タイプ",
        ],
    ),
    (
        "founded",
        &[
            "founded",
            "gegründet",
            "fondée en",
            "fondé en",
            "año de fundación",
            "fundación",
            "fundada em",
            "設立",
        ],
    ),
    (
        "specialties",
        &[
            "specialties",
            "spezialgebiete",
            "spécialisations",
            "domaines",
            "especialidades",
            "especializações",
            "専門分野",
        ],
    ),
];

/// The key of an About row's label: lower case, a typographic apostrophe as `'`, a trailing colon dropped, and
/// a label of [`ABOUT_LABELS`] in any language as its English key (`Branche` → `industry`).
pub(crate) fn about_key(label: &str) -> String {
    let label = label
        .trim()
        .trim_end_matches([':', '：'])
        .trim_end()
        .to_lowercase()
        .replace('’', "'");
    ABOUT_LABELS
        .iter()
        .find(|(_, labels)| labels.contains(&label.as_str()))
        .map_or(label, |(key, _)| (*key).to_owned())
}

/// What a count counts, by the words pages print after (or, in Japanese, before) it. Each word is matched as
/// the beginning of a word in lower case, so `follower` matches `followers` and `Follower:innen`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Counted {
    Followers,
    Employees,
    Alumni,
    Students,
}

impl Counted {
    fn words(self) -> &'static [&'static str] {
        match self {
            Self::Followers => &["follower", "abonné", "seguidor", "フォロワー"],
            Self::Employees => &[
                "employee",
                "mitarbeiter",
                "beschäftigte",
                "employé",
                "empleado",
                "funcionário",
                "従業員",
                "社員",
            ],
            Self::Alumni => &[
                "alumni",
                "anciens élèves",
                "egresados",
                "ex-alunos",
                "卒業生",
            ],
            Self::Students => &[
                "student",
                "studierende",
                "étudiant",
                "estudiante",
                "aluno",
                "学生",
            ],
        }
    }
}

/// The count written beside the first word of `counted` in `text`: within the part of the text the word is in
/// (parts separated by `·`, `•` or `|`), the number right before the word (`London · 5,750 followers`,
/// `View all 69 employees`, `5 750 abonnés`, `1,2 Mio. Follower`), else right after it (`Followers: 5,750`,
/// `フォロワー5,750人`). `None` when no part names it with a number beside it.
pub(crate) fn count_beside(text: &str, counted: Counted) -> Option<Count> {
    let lower = text.to_lowercase();
    lower.split(['·', '•', '|']).find_map(|part| {
        let (at, word) = counted
            .words()
            .iter()
            .filter_map(|word| part.find(word).map(|at| (at, *word)))
            .min_by_key(|(at, _)| *at)?;
        number_before(&part[..at]).or_else(|| number_after(&part[at + word.len()..]))
    })
}

/// The number that ends `before`: its last word when that holds a digit (with a magnitude word after it, as in
/// `1,2 mio.`), and the groups of a space-separated number before it (`5 750`), never a postal code (`94043`).
fn number_before(before: &str) -> Option<Count> {
    let words: Vec<&str> = before.split_whitespace().collect();
    let mut end = words.len();
    // A magnitude word between the number and the counted word.
    if end >= 2
        && words[end - 1]
            .chars()
            .all(|c| c.is_alphabetic() || c == '.')
        && words[end - 2].chars().any(|c| c.is_ascii_digit())
    {
        end -= 1;
    }
    let last = end.checked_sub(1)?;
    if !words[last].chars().any(|c| c.is_ascii_digit()) {
        return None;
    }
    let mut start = last;
    while start > 0 && is_digits(words[start], 3..=3) && is_digits(words[start - 1], 1..=3) {
        start -= 1;
    }
    // Words before the number (`Discover all`) may hold digits of their own; read from the number on.
    let number = words[start..words.len()].join(" ");
    read_count(&number)
}

/// The number that starts `after` (the rest of the counted word, a colon and spaces skipped).
fn number_after(after: &str) -> Option<Count> {
    let after = after
        .trim_start_matches(char::is_alphabetic)
        .trim_start_matches([':', '：'])
        .trim_start();
    after
        .starts_with(|c: char| c.is_ascii_digit())
        .then(|| read_count(after))
        .flatten()
}

fn is_digits(word: &str, length: std::ops::RangeInclusive<usize>) -> bool {
    length.contains(&word.len()) && word.chars().all(|c| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(text: &str, counted: Counted) -> Option<(u64, bool)> {
        count_beside(text, counted).map(|c| (c.value, c.rounded))
    }

    #[test]
    fn counts_beside_their_word_in_each_form_and_language() {
        use Counted::*;
        for (text, counted, expected) in [
            (
                "London, London 5,750 followers",
                Followers,
                Some((5_750, false)),
            ),
            (
                "Software Development · London · 5,750 followers",
                Followers,
                Some((5_750, false)),
            ),
            (
                "Singapore 6K followers 500+ connections",
                Followers,
                Some((6_000, true)),
            ),
            (
                "Mountain View, CA 94043 5,000 followers",
                Followers,
                Some((5_000, false)),
            ),
            (
                "Mountain View, CA 94043 500 followers",
                Followers,
                Some((500, false)),
            ),
            ("Paris 5 750 abonnés", Followers, Some((5_750, false))),
            (
                "München 1,2 Mio. Follower",
                Followers,
                Some((1_200_000, true)),
            ),
            (
                "Berlin 5.750 Follower:innen",
                Followers,
                Some((5_750, false)),
            ),
            ("Madrid 12 mil seguidores", Followers, Some((12_000, true))),
            ("東京都 フォロワー5,750人", Followers, Some((5_750, false))),
            ("5,750人のフォロワー", Followers, Some((5_750, false))),
            ("Followers: 5,750", Followers, Some((5_750, false))),
            ("London, London", Followers, None),
            ("followers and 5 posts", Followers, None),
            (
                "Discover all 310,860 employees",
                Employees,
                Some((310_860, false)),
            ),
            (
                "See all 69 employees on LinkedIn",
                Employees,
                Some((69, false)),
            ),
            ("Alle 69 Mitarbeiter anzeigen", Employees, Some((69, false))),
            ("Voir les 69 employés", Employees, Some((69, false))),
            ("Ver los 69 empleados", Employees, Some((69, false))),
            ("Ver todos os 69 funcionários", Employees, Some((69, false))),
            ("従業員69人を表示", Employees, Some((69, false))),
            ("See all 412,000 alumni", Alumni, Some((412_000, false))),
            ("See all 412,000 alumni", Employees, None),
            ("21,000 students", Students, Some((21_000, false))),
        ] {
            assert_eq!(count(text, counted), expected, "{text} ({counted:?})");
        }
    }

    #[test]
    fn about_labels_in_each_language_are_one_key() {
        for (label, key) in [
            ("Industry", "industry"),
            ("Industries", "industry"),
            ("Branche", "industry"),
            ("Taille de l’entreprise", "company size"),
            ("Tamaño de la empresa", "company size"),
            ("Sede", "headquarters"),
            ("設立", "founded"),
            ("Especializações", "specialties"),
            ("Website:", "website"),
            ("Phone", "phone"),
        ] {
            assert_eq!(about_key(label), key, "{label}");
        }
    }
}
