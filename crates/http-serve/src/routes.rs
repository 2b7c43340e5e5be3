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

/// A table of routes and its router, built once (e.g. in a `LazyLock`).
#[derive(Debug)]
pub struct Routes<Op: 'static, Tag: 'static = ()> {
    routes: &'static [Route<Op, Tag>],
    router: matchit::Router<usize>,
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

impl<Op, Tag> Routes<Op, Tag> {
    /// The table's router.
    ///
    /// # Errors
    /// When two paths conflict or one is not matchit's syntax (a bug in the table, found by its first test).
    pub fn new(routes: &'static [Route<Op, Tag>]) -> Result<Self, matchit::InsertError> {
        let mut router = matchit::Router::new();
        for (index, route) in routes.iter().enumerate() {
            router.insert(route.path, index)?;
        }
        Ok(Self { routes, router })
    }

    /// Every route, in the table's order.
    pub fn all(&self) -> &'static [Route<Op, Tag>] {
        self.routes
    }

    /// The route `path` names; a trailing `/` is forgiven (`/jobs/` is `/jobs`).
    pub fn find(&self, path: &str) -> Option<Found<Op, Tag>> {
        let matched = match self.router.at(path) {
            Ok(matched) => matched,
            Err(_) => self
                .router
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
        let routes = Routes::new(TABLE).expect("a valid table");
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
        assert!(Routes::new(BAD).is_err());
    }
}
