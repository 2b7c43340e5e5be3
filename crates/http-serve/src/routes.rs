//! A route table: each path written once, with the operation each of its methods runs, matched by a
//! [`matchit`] router (the one axum is built on). What an operation does stays the handler's; the table gives
//! it the operation, the path's parameters, and for a method the path does not take the `Allow` value of 405.

use http::Method;

/// One path and what each of its methods does; `tag` is what else the handler keeps per path (who may open it,
/// which part serves it). `HEAD` is taken wherever `GET` is.
#[derive(Debug)]
pub struct Route<Op: 'static, Tag: 'static = ()> {
    /// The path as matched (and as an OpenAPI document writes it): `{name}` stands for one segment.
    pub path: &'static str,
    /// The handler's own data about the path.
    pub tag: Tag,
    /// The methods it takes, in the order `Allow` lists them, and the operation of each.
    pub methods: &'static [(Method, Op)],
}

impl<Op: Copy, Tag> Route<Op, Tag> {
    /// The operation `method` runs on this path; `HEAD` runs `GET`'s.
    pub fn operation(&self, method: &Method) -> Option<Op> {
        let method = if method == Method::HEAD {
            &Method::GET
        } else {
            method
        };
        self.methods
            .iter()
            .find(|(m, _)| m == method)
            .map(|(_, op)| *op)
    }

    /// The `Allow` header's value (RFC 9110 10.2.1): the methods in the table's order, `HEAD` after `GET`.
    pub fn allow(&self) -> String {
        let mut methods = Vec::with_capacity(self.methods.len() + 1);
        for (method, _) in self.methods {
            methods.push(method.as_str());
            if method == Method::GET {
                methods.push("HEAD");
            }
        }
        methods.join(", ")
    }
}

/// A constant route table, its router built on the first lookup:
/// `static TABLE: RouteTable<Op, Tag> = RouteTable::new(ROUTES);`.
#[derive(Debug)]
pub struct RouteTable<Op: 'static, Tag: 'static = ()> {
    routes: &'static [Route<Op, Tag>],
    /// `None` when the table is not valid (logged once; every lookup then finds nothing, and `check` fails).
    router: std::sync::OnceLock<Option<matchit::Router<usize>>>,
}

/// The route a path names, with the path's parameters.
#[derive(Debug)]
pub struct Found<Op: 'static, Tag: 'static> {
    /// The route.
    pub route: &'static Route<Op, Tag>,
    params: Vec<(String, String)>,
}

impl<Op, Tag> Found<Op, Tag> {
    /// The segment the path has where the route writes `{name}`.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

impl<Op, Tag> RouteTable<Op, Tag> {
    /// The table of `routes`; nothing is built until the first lookup.
    pub const fn new(routes: &'static [Route<Op, Tag>]) -> Self {
        Self {
            routes,
            router: std::sync::OnceLock::new(),
        }
    }

    /// Whether every path is matchit's syntax and no two conflict: what a table's test asserts.
    ///
    /// # Errors
    /// The first path matchit refuses.
    pub fn check(&self) -> Result<(), matchit::InsertError> {
        self.build().map(drop)
    }

    fn build(&self) -> Result<matchit::Router<usize>, matchit::InsertError> {
        let mut router = matchit::Router::new();
        for (index, route) in self.routes.iter().enumerate() {
            router.insert(route.path, index)?;
        }
        Ok(router)
    }

    /// The route `path` names; a trailing `/` is forgiven (`/jobs/` is `/jobs`).
    pub fn find(&self, path: &str) -> Option<Found<Op, Tag>> {
        let router = self
            .router
            .get_or_init(|| {
                self.build()
                    .inspect_err(|error| tracing::error!(%error, "a route table is not valid"))
                    .ok()
            })
            .as_ref()?;
        let matched = match router.at(path) {
            Ok(matched) => matched,
            Err(_) => router
                .at(path.strip_suffix('/').filter(|p| !p.is_empty())?)
                .ok()?,
        };
        Some(Found {
            route: self.routes.get(*matched.value)?,
            params: matched
                .params
                .iter()
                .map(|(key, value)| (key.to_owned(), value.to_owned()))
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static TABLE: &[Route<u8>] = &[
        Route {
            path: "/jobs",
            tag: (),
            methods: &[(Method::GET, 1), (Method::POST, 2)],
        },
        Route {
            path: "/jobs/{id}",
            tag: (),
            methods: &[(Method::DELETE, 3)],
        },
        Route {
            path: "/jobs/latest",
            tag: (),
            methods: &[(Method::GET, 4)],
        },
    ];

    #[test]
    fn paths_methods_and_parameters() {
        let routes = RouteTable::new(TABLE);
        routes.check().expect("a valid table");
        let found = routes.find("/jobs/12").expect("a job");
        assert_eq!(
            (found.route.path, found.param("id")),
            ("/jobs/{id}", Some("12"))
        );
        assert_eq!(found.route.operation(&Method::DELETE), Some(3));
        assert_eq!(found.route.operation(&Method::GET), None);
        assert_eq!(
            routes.find("/jobs/latest").map(|f| f.route.path),
            Some("/jobs/latest")
        );
        let jobs = routes.find("/jobs/").expect("trailing slash forgiven");
        assert_eq!(jobs.route.allow(), "GET, HEAD, POST");
        assert_eq!(jobs.route.operation(&Method::HEAD), Some(1));
        for unknown in ["/", "", "/jobs/12/more", "/jobsx"] {
            assert!(routes.find(unknown).is_none(), "{unknown}");
        }
    }

    #[test]
    fn conflicting_paths_are_refused() {
        static BAD: &[Route<u8>] = &[
            Route {
                path: "/a/{id}",
                tag: (),
                methods: &[],
            },
            Route {
                path: "/a/{name}",
                tag: (),
                methods: &[],
            },
        ];
        let bad = RouteTable::new(BAD);
        assert!(bad.check().is_err());
        assert!(bad.find("/a/1").is_none(), "an invalid table finds nothing");
    }
}
