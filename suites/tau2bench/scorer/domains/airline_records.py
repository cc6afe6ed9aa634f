"""The airline domain's records (upstream ``domains/airline/data_model.py``, 1.0.1) and the lookups its tools share
(:class:`AirlineLookups`, the base of :class:`.airline.AirlineTools`; no tools here, so the tools' order is theirs)."""

from ..models import F, Choice, DictOf, ListOf, Lit, Model, Opt, coerce
from ..toolkit import ToolKit

FLIGHT_TYPE = Lit(("round_trip", "one_way"))
CABIN = Lit(("business", "economy", "basic_economy"))
INSURANCE = Lit(("yes", "no"))

AIRPORT_CODE = Model("AirportCode", (F("iata", str, description="IATA code"), F("city", str, description="City name")))
NAME = Model("Name", (F("first_name", str), F("last_name", str)))
ADDRESS = Model("Address", (F("address1", str), F("address2", Opt(str), None), F("city", str), F("country", str),
                            F("state", str), F("zip", str)))
PAYMENT = Model("Payment", (F("payment_id", str, description="Unique identifier for the payment"),
                            F("amount", int, description="Payment amount in dollars")))
_METHOD = Model("PaymentMethodBase", (F("source", str), F("id", str)))
CREDIT_CARD = _METHOD.extend("CreditCard", (F("source", Lit(("credit_card",))), F("brand", str), F("last_four", str)))
GIFT_CARD = _METHOD.extend("GiftCard", (F("source", Lit(("gift_card",))), F("amount", float), F("id", str)))
CERTIFICATE = _METHOD.extend("Certificate", (F("source", Lit(("certificate",))), F("amount", float)))
PAYMENT_METHOD = Choice("source", (CREDIT_CARD, GIFT_CARD, CERTIFICATE))
PASSENGER = Model("Passenger", (F("first_name", str, description="Passenger's first name"),
                                F("last_name", str, description="Passenger's last name"),
                                F("dob", str, description="Date of birth in YYYY-MM-DD format")))
SEATS = DictOf(int)
_STATUS = [
    Model("FlightDateStatusAvailable", (F("status", Lit(("available",))), F("available_seats", SEATS),
                                        F("prices", SEATS))),
    Model("FlightDateStatusLanded", (F("status", Lit(("landed",))), F("actual_departure_time_est", str),
                                     F("actual_arrival_time_est", str))),
    Model("FlightDateStatusCancelled", (F("status", Lit(("cancelled",))),)),
    Model("FlightDateStatusDelayed", (F("status", Lit(("delayed",))), F("estimated_departure_time_est", str),
                                      F("estimated_arrival_time_est", str))),
    Model("FlightDataStatusFlying", (F("status", Lit(("flying",))), F("actual_departure_time_est", str),
                                     F("estimated_arrival_time_est", str))),
    Model("FlightDataStatusOnTime", (F("status", Lit(("on time",))), F("estimated_departure_time_est", str),
                                     F("estimated_arrival_time_est", str))),
]
FLIGHT_DATE_STATUS = Choice("status", tuple(_STATUS))
_FLIGHT_BASE = Model("FlightBase", (F("flight_number", str), F("origin", str), F("destination", str)))
FLIGHT = _FLIGHT_BASE.extend("Flight", (F("scheduled_departure_time_est", str), F("scheduled_arrival_time_est", str),
                                        F("dates", DictOf(FLIGHT_DATE_STATUS))))
DIRECT_FLIGHT = _FLIGHT_BASE.extend("DirectFlight", (
    F("status", Lit(("available",))), F("scheduled_departure_time_est", str), F("scheduled_arrival_time_est", str),
    F("date", Opt(str), None), F("available_seats", SEATS), F("prices", SEATS)))
RESERVATION_FLIGHT = _FLIGHT_BASE.extend("ReservationFlight", (F("date", str), F("price", int)))
FLIGHT_INFO = Model("FlightInfo", (
    F("flight_number", str, description="Flight number, such as 'HAT001'."),
    F("date", str, description="The date for the flight in the format 'YYYY-MM-DD', such as '2024-05-01'.")))
USER = Model("User", (F("user_id", str), F("name", NAME), F("address", ADDRESS), F("email", str), F("dob", str),
                      F("payment_methods", DictOf(PAYMENT_METHOD)), F("saved_passengers", ListOf(PASSENGER)),
                      F("membership", Lit(("gold", "silver", "regular"))), F("reservations", ListOf(str))))
RESERVATION = Model("Reservation", (
    F("reservation_id", str), F("user_id", str), F("origin", str), F("destination", str),
    F("flight_type", FLIGHT_TYPE), F("cabin", CABIN), F("flights", ListOf(RESERVATION_FLIGHT)),
    F("passengers", ListOf(PASSENGER)), F("payment_history", ListOf(PAYMENT)), F("created_at", str),
    F("total_baggages", int), F("nonfree_baggages", int), F("insurance", INSURANCE),
    F("status", Opt(Lit(("cancelled",))), None)))
FLIGHT_DB = Model("FlightDB", (F("flights", DictOf(FLIGHT)), F("users", DictOf(USER)),
                               F("reservations", DictOf(RESERVATION))), forbid_extra=True)

AIRPORTS = [("SFO", "San Francisco"), ("JFK", "New York"), ("LAX", "Los Angeles"), ("ORD", "Chicago"),
            ("DFW", "Dallas"), ("DEN", "Denver"), ("SEA", "Seattle"), ("ATL", "Atlanta"), ("MIA", "Miami"),
            ("BOS", "Boston"), ("PHX", "Phoenix"), ("IAH", "Houston"), ("LAS", "Las Vegas"), ("MCO", "Orlando"),
            ("EWR", "Newark"), ("CLT", "Charlotte"), ("MSP", "Minneapolis"), ("DTW", "Detroit"),
            ("PHL", "Philadelphia"), ("LGA", "LaGuardia")]


def _records(items, model):
    """``[Model(**item)]`` when every item is a dict (upstream's conversion of the tool's arguments)."""
    if all(isinstance(item, dict) for item in items):
        return [coerce(model, item) for item in items]
    return list(items)


class AirlineLookups(ToolKit):
    """The airline database and the helpers of its tools (errors as upstream words them)."""


    db_model = FLIGHT_DB

    # -- helpers (errors as upstream words them)
    def _get_user(self, user_id):
        if user_id not in self.db["users"]:
            raise ValueError(f"User {user_id} not found")
        return self.db["users"][user_id]

    def _get_reservation(self, reservation_id):
        if reservation_id not in self.db["reservations"]:
            raise ValueError(f"Reservation {reservation_id} not found")
        return self.db["reservations"][reservation_id]

    def _get_flight(self, flight_number):
        if flight_number not in self.db["flights"]:
            raise ValueError(f"Flight {flight_number} not found")
        return self.db["flights"][flight_number]

    def _get_flight_instance(self, flight_number, date):
        flight = self._get_flight(flight_number)
        if date not in flight["dates"]:
            raise ValueError(f"Flight {flight_number} not found on date {date}")
        return flight["dates"][date]

    def _get_new_reservation_id(self):
        for reservation_id in ["HATHAT", "HATHAU", "HATHAV"]:
            if reservation_id not in self.db["reservations"]:
                return reservation_id
        raise ValueError("Too many reservations")

    def _search_direct_flight(self, date, origin=None, destination=None, leave_after=None):
        results = []
        for flight in self.db["flights"].values():
            if ((origin is None or flight["origin"] == origin)
                    and (destination is None or flight["destination"] == destination)
                    and date in flight["dates"] and flight["dates"][date]["status"] == "available"
                    and (leave_after is None or flight["scheduled_departure_time_est"] >= leave_after)):
                day = flight["dates"][date]
                results.append(coerce(DIRECT_FLIGHT, {
                    "flight_number": flight["flight_number"], "origin": flight["origin"],
                    "destination": flight["destination"], "status": "available",
                    "scheduled_departure_time_est": flight["scheduled_departure_time_est"],
                    "scheduled_arrival_time_est": flight["scheduled_arrival_time_est"],
                    "available_seats": day["available_seats"], "prices": day["prices"]}))
        return results

    def _payment_for_update(self, user, payment_id, total_price):
        if payment_id not in user["payment_methods"]:
            raise ValueError("Payment method not found")
        method = user["payment_methods"][payment_id]
        if method["source"] == "certificate":
            raise ValueError("Certificate cannot be used to update reservation")
        elif method["source"] == "gift_card" and method["amount"] < total_price:
            raise ValueError("Gift card balance is not enough")
        if method["source"] == "gift_card":
            method["amount"] -= total_price
        if total_price != 0:
            return coerce(PAYMENT, {"payment_id": payment_id, "amount": total_price})
        return None
